// A handshake request: js-libp2p's real secure-channel upgrade over TCP against fixturegen's
// fixture peer. @libp2p/tcp makes the connection (its dial and its listener, as in a node);
// the upgrader it calls is this adapter's, and does what libp2p's upgrader does for the
// security step: multistream-select (@libp2p/multistream-select select / handle) for
// /tls/1.0.0, then @libp2p/tls secureOutbound(connection, { remotePeer }) / secureInbound.
import { generateKeyPair } from '@libp2p/crypto/keys'
import { defaultLogger } from '@libp2p/logger'
import { handle, select } from '@libp2p/multistream-select'
import { peerIdFromString } from '@libp2p/peer-id'
import { tcp } from '@libp2p/tcp'
import { tls } from '@libp2p/tls'
import { multiaddr } from '@multiformats/multiaddr'

const PROTOCOL = '/tls/1.0.0'
let components

async function local () {
  components ??= {
    privateKey: await generateKeyPair('Ed25519'),
    logger: defaultLogger(),
    upgrader: { getStreamMuxers: () => new Map() } // ALPN offers only "libp2p"
  }
  return components
}

export async function handshake (req, errorText) {
  if (req.transport !== 'tcp') {
    return { id: req.id, verdict: 'skip', peer_id: null, error: `adapter: transport ${req.transport} is not built into this adapter` }
  }
  const c = await local()
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
          await select(maConn, PROTOCOL, { signal })
          return await tls()(c).secureOutbound(maConn, { remotePeer, signal, skipStreamMuxerNegotiation: true })
        }
      }
    })
    secured.connection.abort(new Error('adapter: done'))
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
          await handle(maConn, PROTOCOL, { signal })
          const secured = await tls()(c).secureInbound(maConn, { signal, skipStreamMuxerNegotiation: true })
          done.resolve({ verdict: 'accept', peer_id: secured.remotePeer.toString(), error: null })
          secured.connection.abort(new Error('adapter: done'))
        } catch (err) {
          done.resolve({ verdict: 'reject', peer_id: null, error: errorText(err) })
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
