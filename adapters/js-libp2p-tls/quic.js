// A handshake request over QUIC v1: @chainsafe/libp2p-quic (quinn and rust-libp2p's libp2p-tls
// certificate check, through napi), as a js-libp2p node uses it: the transport's dial of
// /ip4/.../udp/PORT/quic-v1/p2p/PEER, or createListener + listen. Its upgrader calls (skip
// encryption: QUIC secured the connection) hand over the authenticated PeerId. A failed
// inbound handshake never reaches JavaScript, so a listen request also ends on the harness's
// cancel line (after a short grace for a connection on its way).
import { multiaddr } from '@multiformats/multiaddr'
import { components, QUIC, quicRemotePeer } from './compat.js'

let transport

async function local () {
  if (transport == null) {
    const { quic } = await import('@chainsafe/libp2p-quic')
    const { privateKey, logger } = await components()
    transport = quic()({ privateKey, logger })
  }
  return transport
}

export async function handshakeQUIC (req, errorText, cancelled) {
  if (!QUIC) {
    return { id: req.id, verdict: 'skip', peer_id: null, error: 'adapter: no @chainsafe/libp2p-quic is served for this @libp2p/tls major (see build-info.json)' }
  }
  const t = await local()
  const ms = req.timeout_ms ?? 10000
  const signal = AbortSignal.timeout(ms)
  if (req.direction !== 'listen') {
    if (req.expect_peer_id == null) {
      return { id: req.id, verdict: 'skip', peer_id: null, error: 'adapter: a QUIC dial needs the PeerId (/p2p/ in the address)' }
    }
    const [host, port] = req.address.split(':')
    try {
      const peer = await t.dial(multiaddr(`/ip4/${host}/udp/${port}/quic-v1/p2p/${req.expect_peer_id}`), {
        signal,
        upgrader: { upgradeOutbound: async (maConn, opts) => { maConn.abort(new Error('adapter: done')); return quicRemotePeer(maConn, opts) } }
      })
      return { id: req.id, verdict: 'accept', peer_id: peer.toString(), error: null }
    } catch (err) {
      return { id: req.id, verdict: 'reject', peer_id: null, error: errorText(err) }
    }
  }
  const accepted = Promise.withResolvers()
  const listener = t.createListener({
    upgrader: {
      upgradeInbound: async (maConn, opts) => {
        accepted.resolve({ verdict: 'accept', peer_id: quicRemotePeer(maConn, opts).toString(), error: null })
        maConn.abort(new Error('adapter: done'))
      }
    }
  })
  const timer = setTimeout(() => accepted.resolve({ verdict: 'reject', peer_id: null, error: `adapter: the QUIC listener accepted no connection within ${ms} ms` }), ms)
  const cancel = cancelled(req.id)
  try {
    await listener.listen(multiaddr('/ip4/127.0.0.1/udp/0/quic-v1'))
    const port = listener.getAddrs()[0].toString().split('/')[4]
    process.stdout.write(JSON.stringify({ id: req.id, listening: `127.0.0.1:${port}` }) + '\n')
    const first = await Promise.race([accepted.promise, cancel.promise])
    if (first.cancel == null) return { id: req.id, ...first }
    const grace = new Promise(resolve => setTimeout(() => resolve({ verdict: 'reject', peer_id: null, error: `adapter: the QUIC listener accepted no connection (a failed inbound handshake never reaches JavaScript); ${first.cancel}` }), first.graceMs))
    return { id: req.id, ...(await Promise.race([accepted.promise, grace])) }
  } finally {
    clearTimeout(timer)
    cancel.stop()
    // The verdict is known: closing the listener (about 90 ms once it accepted a connection,
    // quinn's endpoint waiting for it to close) goes on while the next request runs.
    listener.close().catch(() => {})
  }
}
