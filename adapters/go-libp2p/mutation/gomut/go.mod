module fixturegen/adapters/go-libp2p/mutation/gomut

go 1.26.0
