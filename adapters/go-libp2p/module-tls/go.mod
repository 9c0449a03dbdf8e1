// A placeholder: versions.py writes the go.mod of each build (go-libp2p before v0.20.0).
module fixturegen/adapters/go-libp2p/module-tls

go 1.26.0

require github.com/libp2p/go-libp2p v0.19.4
