module fixturegen/peer

go 1.26.0
