// Lists (or writes) the mutants of @libp2p/tls's compiled JavaScript with Stryker's instrumenter,
// for fixturegen's mutation campaigns (adapters/js-libp2p-tls/mutate list | instrument).
//
//   node mutants.mjs CONFIG TREE list         one JSON object per mutant on stdout
//   node mutants.mjs CONFIG TREE instrument   every mutant into TREE's files, switchable
//
// The instrumenter puts every mutant into one file, each behind a switch that
// __STRYKER_ACTIVE_MUTANT__ turns on (mutation switching): the adapter is built once and the
// environment picks the mutant. Only the functions CONFIG names are mutated (their ranges are
// found with Babel's parser, which the instrumenter brings). Both commands instrument the same
// inputs the same way, so the ids of the listing are the switches of the instrumented tree.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from '@babel/parser'
import { Instrumenter } from '@stryker-mutator/instrumenter'

const [configPath, tree, command] = process.argv.slice(2)
const config = JSON.parse(readFileSync(configPath, 'utf8'))
const quiet = () => {}
const logger = { isDebugEnabled: () => false, isTraceEnabled: () => false, isInfoEnabled: () => false, debug: quiet, info: quiet, trace: quiet, warn: console.error, error: console.error, fatal: console.error }

function ranges (code, wanted) {
  const ast = parse(code, { sourceType: 'module' })
  const out = []
  const visit = (node, owner) => {
    if (node == null || typeof node.type !== 'string') return
    let name = null
    if ((node.type === 'FunctionDeclaration' || node.type === 'ClassMethod') && (node.id ?? node.key)) {
      name = (node.id ?? node.key).name
      if (owner != null && node.type === 'ClassMethod') name = `${owner}.${name}`
    }
    if (name != null && wanted.includes(name)) {
      // 0-based lines for the instrumenter's mutate ranges (its own convention)
      out.push({ name, start: { line: node.loc.start.line - 1, column: node.loc.start.column }, end: { line: node.loc.end.line - 1, column: node.loc.end.column } })
    }
    const inner = node.type === 'ClassDeclaration' && node.id ? node.id.name : owner
    for (const key of Object.keys(node)) {
      const child = node[key]
      if (Array.isArray(child)) child.forEach(c => visit(c, inner))
      else if (child && typeof child.type === 'string' && key !== 'loc') visit(child, inner)
    }
  }
  visit(ast.program, null)
  return out
}

const files = config.files.map(name => {
  const content = readFileSync(join(tree, name), 'utf8')
  return { name, content, scoped: ranges(content, config.functions) }
})
const { files: instrumented, mutants } = await new Instrumenter(logger).instrument(
  files.map(f => ({ name: f.name, content: f.content, mutate: f.scoped.map(r => ({ start: r.start, end: r.end })) })),
  { plugins: null, excludedMutations: config.excludedMutations ?? [], ignorers: [] })

if (command === 'instrument') {
  for (const f of instrumented) writeFileSync(join(tree, f.name), f.content)
} else {
  const source = Object.fromEntries(files.map(f => [f.name, f.content]))
  for (const m of mutants) {
    if (m.status === 'Ignored') continue
    const lines = source[m.fileName].split('\n')
    const { start, end } = m.location // 0-based lines and columns, end exclusive
    const owner = files.find(f => f.name === m.fileName).scoped.find(r => r.start.line <= start.line && start.line <= r.end.line)
    const original = start.line === end.line
      ? lines[start.line].slice(start.column, end.column)
      : [lines[start.line].slice(start.column), ...lines.slice(start.line + 1, end.line), lines[end.line].slice(0, end.column)].join('\n')
    process.stdout.write(JSON.stringify({
      id: `${m.fileName}:${start.line + 1}:${start.column + 1}:${m.mutatorName}#${m.id}`,
      file: m.fileName,
      line: start.line + 1,
      function: owner ? owner.name : null,
      operator: m.mutatorName,
      start: [start.line + 1, start.column + 1],
      end: [end.line + 1, end.column + 1],
      replacement: m.replacement,
      original
    }) + '\n')
  }
}
