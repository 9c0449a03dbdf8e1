// go-libp2p v0.20.x and v0.21.x keep core/ in the separate module go-libp2p-core. A build of
// those versions replaces github.com/libp2p/go-libp2p/core with this folder (versions.py), so
// the adapter's imports stay as they are: each package aliases what the adapter uses.
module github.com/libp2p/go-libp2p/core

go 1.17

require github.com/libp2p/go-libp2p-core v0.16.1
