const acorn = require('internal/deps/acorn/acorn/dist/acorn');
const fs = require('fs'), path = require('path');
const [root, limit] = [process.argv[2], +process.argv[3]];
const files = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, {withFileTypes: true}).sort((a, b) => a.name < b.name ? -1 : 1)) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\.(js|mjs|cjs)$/.test(e.name)) files.push(p);
  }
})(root);
const out = [];
for (const f of files) {
  if (out.length >= limit) break;
  const text = fs.readFileSync(f, 'utf8');
  if (text.length > 2e6) continue;
  let ast = null;
  for (const sourceType of ['module', 'script']) {
    try { ast = acorn.parse(text, {ecmaVersion: 'latest', sourceType, allowHashBang: true, allowReturnOutsideFunction: true}); break; } catch (e) {}
  }
  if (!ast) continue;
  const b = new Int32Array(text.length + 1);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    b[i] = n;
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1; else if (c < 0x800) n += 2;
    else if (c >= 0xD800 && c < 0xDC00 && i + 1 < text.length) { n += 4; b[i + 1] = n; i++; continue; }
    else n += 3;
  }
  b[text.length] = n;
  const lits = [];
  (function visit(node, inTemplateExpr) {
    if (!node || typeof node.type !== 'string') return;
    if (node.type === 'Literal' && typeof node.value === 'string' && !inTemplateExpr) {
      lits.push({start: b[node.start], end: b[node.end], value: Buffer.from(node.value, 'utf8').toString('base64')});
    }
    if (node.type === 'TemplateLiteral' && !inTemplateExpr) {
      const ok = node.quasis.every(q => q.value.cooked != null);
      lits.push({start: b[node.start], end: b[node.end], value: ok ? Buffer.from(node.quasis.map(q => q.value.cooked).join('pgpoolcheck_param'), 'utf8').toString('base64') : null});
    }
    for (const k of Object.keys(node)) {
      const v = node[k];
      const inner = inTemplateExpr || (node.type === 'TemplateLiteral' && k === 'expressions');
      if (Array.isArray(v)) v.forEach(x => visit(x, inner));
      else if (v && typeof v.type === 'string') visit(v, inner);
    }
  })(ast, false);
  lits.sort((x, y) => x.start - y.start);
  out.push({file: f, strings: lits});
}
process.stdout.write(JSON.stringify(out));
