// The calls whose shape changed across @libp2p/tls majors, in one place. A build of another
// version (versions.py, its SHIMS table) writes shims.json with the names of the shims that
// version needs; the pinned build has no shims.json, so every function below is the plain
// call of @libp2p/tls 3.1 and its companions. Everything is imported as a namespace or lazily,
// so a name an older package lacks is never a link error.
import { readFileSync } from 'node:fs'
import * as cryptoKeys from '@libp2p/crypto/keys'
import { defaultLogger } from '@libp2p/logger'
import * as mss from '@libp2p/multistream-select'
import * as peerIds from '@libp2p/peer-id'
import { tls } from '@libp2p/tls'

function load () {
  try {
    return JSON.parse(readFileSync(new URL('./shims.json', import.meta.url), 'utf8')).shims ?? []
  } catch (err) {
    if (err.code === 'ENOENT') return []
    throw err
  }
}

const SHIMS = new Set(load())
// @libp2p/tls before 2.0.0 (interface 1): the host key travels as a PeerId carrying its keys
// (generateCertificate(peerId), secure*(localPeerId, conn, remotePeer)); @libp2p/crypto 4 has
// no ECDSA.
const PEER_ID_KEYS = SHIMS.has('peer-id-keys')
// 0.0.0: verifyPeerCertificate(raw) takes no expected PeerId; its encrypter compared after.
const VERIFY_NO_EXPECTED = SHIMS.has('verify-no-expected')
// before 3.0.0 (interfaces 1 and 2): duplex streams. multistream-select 5/6 wants a logger and
// returns the stream to go on with; the secured connection is `.conn`.
const DUPLEX = SHIMS.has('duplex')
// before 3.1.0: './utils' is not in the package's exports.
const UTILS_PATH = SHIMS.has('utils-path')

export const PROTOCOL = '/tls/1.0.0'
export const QUIC = !SHIMS.has('no-quic')
// @chainsafe/libp2p-quic 1.x (interface 2) hands its upgrader no remotePeer: it is the /p2p/
// of the connection's remote address.
const QUIC_PEER_IN_ADDR = SHIMS.has('quic-peer-in-addr')

const log = defaultLogger().forComponent('fixturegen:adapter')

let utilsModule
// generateCertificate and verifyPeerCertificate, the functions the encrypter calls.
export async function utils () {
  if (utilsModule == null) {
    utilsModule = UTILS_PATH
      ? await import(new URL('utils.js', import.meta.resolve('@libp2p/tls')).href)
      : await import('@libp2p/tls/utils')
  }
  return utilsModule
}

// fixturegen's host key types, as @libp2p/crypto's generateKeyPair names them.
const KEY_TYPES = { ed25519: ['Ed25519'], secp256k1: ['secp256k1'], ecdsa: ['ECDSA', 'P-256'], rsa: ['RSA', 2048] }

export const KNOWN_KEY_TYPES = Object.keys(KEY_TYPES)

// A fresh host key of a fixturegen type; null when this @libp2p/crypto has no such key type.
export async function generateKey (type) {
  const args = KEY_TYPES[type]
  if (args == null || (PEER_ID_KEYS && type === 'ecdsa')) return null
  return await cryptoKeys.generateKeyPair(...args)
}

// What generateCertificate takes for a host key: the key, or (interface 1) its PeerId.
export async function signer (key) {
  return PEER_ID_KEYS ? await peerIds.peerIdFromKeys(key.public.bytes, key.bytes) : key
}

export async function peerIdOf (key) {
  return PEER_ID_KEYS
    ? (await peerIds.peerIdFromKeys(key.public.bytes)).toString()
    : peerIds.peerIdFromPrivateKey(key).toString()
}

export function peerIdFromString (text) {
  return peerIds.peerIdFromString(text)
}

export class UnexpectedPeerError extends Error {
  constructor () {
    super('Unexpected Peer')
    this.name = 'UnexpectedPeerError'
  }
}

export async function verify (leaf, expected) {
  const { verifyPeerCertificate } = await utils()
  if (!VERIFY_NO_EXPECTED) return await verifyPeerCertificate(leaf, expected)
  const peer = await verifyPeerCertificate(leaf)
  if (expected?.equals(peer) === false) throw new UnexpectedPeerError()
  return peer
}

let local
// This side's components: a fresh Ed25519 host key, a logger, and an upgrader offering no
// stream muxer (ALPN "libp2p" only).
export async function components () {
  if (local == null) {
    const privateKey = await cryptoKeys.generateKeyPair('Ed25519')
    local = {
      privateKey,
      logger: defaultLogger(),
      upgrader: { getStreamMuxers: () => new Map() },
      peerId: PEER_ID_KEYS ? await signer(privateKey) : undefined
    }
  }
  return local
}

export function encrypter (c) {
  return tls()(c)
}

// multistream-select for /tls/1.0.0 as the dialing upgrader runs it; the stream to secure.
export async function selectTLS (conn, signal) {
  if (!DUPLEX) {
    await mss.select(conn, PROTOCOL, { signal })
    return conn
  }
  return (await mss.select(conn, [PROTOCOL], { signal, log, yieldBytes: true })).stream
}

export async function handleTLS (conn, signal) {
  if (!DUPLEX) {
    await mss.handle(conn, PROTOCOL, { signal })
    return conn
  }
  return (await mss.handle(conn, [PROTOCOL], { signal, log })).stream
}

export async function secureOutbound (c, stream, remotePeer, signal) {
  const e = encrypter(c)
  return PEER_ID_KEYS
    ? await e.secureOutbound(c.peerId, stream, remotePeer)
    : await e.secureOutbound(stream, { remotePeer, signal, skipStreamMuxerNegotiation: true })
}

export async function secureInbound (c, stream, signal, remotePeer) {
  const e = encrypter(c)
  return PEER_ID_KEYS
    ? await e.secureInbound(c.peerId, stream, remotePeer)
    : await e.secureInbound(stream, { remotePeer, signal, skipStreamMuxerNegotiation: true })
}

// Ends a secured connection once its verdict is known.
export function finish (secured) {
  const conn = DUPLEX ? secured.conn : secured.connection
  const err = new Error('adapter: done')
  if (typeof conn?.abort === 'function') conn.abort(err)
  else conn?.close?.().catch(() => {})
}

// The PeerId a QUIC upgrader call was handed.
export function quicRemotePeer (maConn, opts) {
  if (QUIC_PEER_IN_ADDR && opts?.remotePeer == null) {
    return peerIds.peerIdFromString(maConn.remoteAddr.getPeerId())
  }
  return opts.remotePeer
}
