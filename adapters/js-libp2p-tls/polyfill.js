// Promise.withResolvers (ES2024, Node 22) for Node 20: @libp2p/utils' byte streams, which
// multistream-select reads through, call it. Spec-exact; a no-op where Node has it.
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers () {
    let resolve, reject
    const promise = new this((res, rej) => { resolve = res; reject = rej })
    return { promise, resolve, reject }
  }
}
