// fixturegen harness adapter for js-libp2p's @libp2p/tls.
//
// Reads one JSON request per line on stdin, writes one JSON result per line on stdout (the
// protocol is in fixturegen's README). Each certificate goes through the package's exported
// verifyPeerCertificate(rawCertificate, expectedPeerId) from '@libp2p/tls/utils', the function
// its TLS encrypter calls in a handshake. That encrypter hands it only the leaf certificate
// (node's socket.getPeerCertificate().raw), so a chain's extra certificates are not passed:
// the adapter does what the library does with them. A generate request returns what
// generateCertificate makes for a fresh host key. A handshake request runs the real upgrade
// over TCP (handshake.js) or QUIC (quic.js).
import './polyfill.js'
import { createInterface } from 'node:readline'
import { generateKey, KNOWN_KEY_TYPES, peerIdFromString, peerIdOf, signer, utils, verify } from './compat.js'
import { handshake } from './handshake.js'
import { handshakeQUIC } from './quic.js'

function pemBody (pem) {
  return pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, '').replace(/\s+/g, '')
}

// generateCertificate is what the TLS encrypter calls for its own certificate when it starts.
async function generate (req) {
  if (!KNOWN_KEY_TYPES.includes(req.host_key_type)) {
    return { id: req.id, verdict: 'skip', peer_id: null, error: `adapter: unknown host key type ${req.host_key_type}` }
  }
  let key, made
  try {
    key = await generateKey(req.host_key_type)
    if (key == null) {
      return { id: req.id, verdict: 'skip', peer_id: null, error: `adapter: no ${req.host_key_type} host keys in this @libp2p/crypto` }
    }
    made = await (await utils()).generateCertificate(await signer(key))
  } catch (err) {
    return { id: req.id, verdict: 'reject', peer_id: null, error: errorText(err) }
  }
  let peerId
  try {
    peerId = await peerIdOf(key)
  } catch (err) {
    // No libp2p identity of this type: the library made a certificate it cannot stand behind.
    return { id: req.id, verdict: 'skip', peer_id: null, error: `peerIdFromPrivateKey: ${errorText(err)}` }
  }
  return {
    id: req.id,
    verdict: 'accept',
    peer_id: peerId,
    error: null,
    certificates: [pemBody(made.cert)],
    certificate_key: made.key
  }
}

function errorText (err) {
  if (err == null) return 'unknown error'
  const name = err.name != null ? `${err.name}: ` : ''
  return `${name}${err.message ?? String(err)}`
}

async function check (req) {
  if (req.kind === 'generate') return await generate(req)
  if (req.kind === 'handshake') return await handshake(req, errorText)
  if (req.kind != null && req.kind !== 'certificate') {
    return { id: req.id, verdict: 'skip', peer_id: null, error: '@libp2p/tls has no exported API that checks a CertificateVerify (node:tls does it inside the handshake)' }
  }
  let expected
  if (req.expect_peer_id != null) {
    try {
      expected = peerIdFromString(req.expect_peer_id)
    } catch (err) {
      return { id: req.id, verdict: 'reject', peer_id: null, error: `adapter: expected PeerId unparsable: ${errorText(err)}` }
    }
  }
  const leaf = Buffer.from(req.certificates[0] ?? '', 'base64')
  try {
    const peerId = await verify(new Uint8Array(leaf), expected)
    return { id: req.id, verdict: 'accept', peer_id: peerId.toString(), error: null }
  } catch (err) {
    return { id: req.id, verdict: 'reject', peer_id: null, error: errorText(err) }
  }
}

// stdin as a queue of lines, so that a listening QUIC handshake can see its cancel line.
const queued = []
const waiting = []
const watchers = new Map() // case id -> resolve of a pending cancel
const input = createInterface({ input: process.stdin, crlfDelay: Infinity })
input.on('line', (line) => {
  if (line.includes('"cancel"')) {
    try {
      // grace_ms: how long a connection still on its way gets (0: the fixture peer was
      // refused, none is coming); 250 when the harness does not say
      const { id, cancel, grace_ms: graceMs } = JSON.parse(line)
      watchers.get(id)?.({ cancel, graceMs: graceMs ?? 250 })
    } catch {}
    return // a cancel that came after its answer is dropped
  }
  if (waiting.length > 0) waiting.shift()(line)
  else queued.push(line)
})
input.on('close', () => { for (const w of waiting.splice(0)) w(null); queued.push(null) })
function nextLine () {
  return queued.length > 0 ? Promise.resolve(queued.shift()) : new Promise(resolve => waiting.push(resolve))
}
function cancelled (id) {
  const { promise, resolve } = Promise.withResolvers()
  watchers.set(id, resolve)
  return { promise, stop: () => watchers.delete(id) }
}

for (let line = await nextLine(); line !== null; line = await nextLine()) {
  if (line.trim() === '') continue
  const started = process.cpuUsage()
  let reply
  try {
    const req = JSON.parse(line)
    reply = req.kind === 'handshake' && req.transport === 'quic'
      ? await handshakeQUIC(req, errorText, cancelled)
      : await check(req)
    if (req.kind !== 'generate') { // CPU time (user+system) of this process for the request
      const used = process.cpuUsage(started)
      reply.cpu_seconds = (used.user + used.system) / 1e6
    }
  } catch (err) {
    reply = { id: '', verdict: 'skip', peer_id: null, error: `adapter: unreadable request: ${errorText(err)}` }
  }
  process.stdout.write(JSON.stringify(reply) + '\n')
}
process.exit(0)
