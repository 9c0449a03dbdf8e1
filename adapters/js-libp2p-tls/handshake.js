// A handshake request: js-libp2p's real secure-channel upgrade over TCP against fixturegen's
// fixture peer. @libp2p/tcp makes the connection (its dial and its listener, as in a node);
// the upgrader it calls is this adapter's, and does what libp2p's upgrader does for the
// security step: multistream-select (@libp2p/multistream-select select / handle) for
// /tls/1.0.0, then @libp2p/tls secureOutbound(connection, { remotePeer }) / secureInbound.
import { tcp } from '@libp2p/tcp'
import { multiaddr } from '@multiformats/multiaddr'
import { components, finish, handleTLS, peerIdFromString, secureInbound, secureOutbound, selectTLS } from './compat.js'

export async function handshake (req, errorText) {
  if (req.transport !== 'tcp') {
    return { id: req.id, verdict: 'skip', peer_id: null, error: `adapter: transport ${req.transport} is not built into this adapter` }
  }
  const c = await components()
  const ms = req.timeout_ms ?? 10000
  const signal = AbortSignal.timeout(ms)
  if (req.direction === 'listen') return await listen(req, c, ms, signal, errorText)
  let remotePeer
  try {
    remotePeer = req.expect_peer_id != null ? peerIdFromString(req.expect_peer_id) : undefined
  } catch (err) {
    return { id: req.id, verdict: 'reject', peer_id: null, error: `adapter: expected PeerId unparsable: ${errorText(err)}` }
  }
  const [host, port] = req.address.split(':')
  try {
    const secured = await tcp()(c).dial(multiaddr(`/ip4/${host}/tcp/${port}`), {
      signal,
      upgrader: {
        upgradeOutbound: async (maConn) => {
          const stream = await selectTLS(maConn, signal)
          return await secureOutbound(c, stream, remotePeer, signal)
        }
      }
    })
    finish(secured)
    return { id: req.id, verdict: 'accept', peer_id: secured.remotePeer.toString(), error: null }
  } catch (err) {
    return { id: req.id, verdict: 'reject', peer_id: null, error: errorText(err) }
  }
}

async function listen (req, c, ms, signal, errorText) {
  const done = Promise.withResolvers()
  const listener = tcp()(c).createListener({
    upgrader: {
      upgradeInbound: async (maConn) => {
        try {
          // a listener that knows whom it expects: secureInbound's remotePeer option
          const remotePeer = req.expect_peer_id != null ? peerIdFromString(req.expect_peer_id) : undefined
          const stream = await handleTLS(maConn, signal)
          const secured = await secureInbound(c, stream, signal, remotePeer)
          done.resolve({ verdict: 'accept', peer_id: secured.remotePeer.toString(), error: null })
          finish(secured)
        } catch (err) {
          done.resolve({ verdict: 'reject', peer_id: null, error: errorText(err) })
          // as libp2p's upgrader does; @libp2p/tls 1.x leaves the socket open, and the
          // listener's close would wait for it until the request's timeout
          maConn.abort?.(err)
        }
      }
    }
  })
  const timer = setTimeout(() => done.resolve({ verdict: 'reject', peer_id: null, error: `adapter: no verdict within ${ms} ms` }), ms)
  try {
    await listener.listen(multiaddr('/ip4/127.0.0.1/tcp/0'))
    const port = Number(listener.getAddrs()[0].toString().split('/')[4])
    process.stdout.write(JSON.stringify({ id: req.id, listening: `127.0.0.1:${port}` }) + '\n')
    return { id: req.id, ...(await done.promise) }
  } finally {
    clearTimeout(timer)
    await listener.close()
  }
}
