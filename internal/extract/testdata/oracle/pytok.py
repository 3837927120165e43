import ast, base64, io, json, os, sys, tokenize
root, limit = sys.argv[1], int(sys.argv[2])
out = []
n = 0
for dirpath, dirs, files in os.walk(root):
    dirs.sort()
    for f in sorted(files):
        if not f.endswith('.py'):
            continue
        p = os.path.join(dirpath, f)
        data = open(p, 'rb').read()
        try:
            text = data.decode('utf-8')
        except UnicodeDecodeError:
            continue
        if '\r' in text or '\t' in text[:0]:
            continue
        lines = [l + '\n' for l in text.split('\n')]
        starts = [0]
        for l in lines:
            starts.append(starts[-1] + len(l))
        def boff(row, col):
            c = starts[row-1] + col
            return len(text[:c].encode('utf-8'))
        toks = []
        try:
            for t in tokenize.tokenize(io.BytesIO(data).readline):
                if t.type != tokenize.STRING:
                    continue
                s, e = boff(*t.start), boff(*t.end)
                v = None
                if '\\N{' not in t.string:
                    try:
                        val = ast.literal_eval(t.string)
                        if isinstance(val, str):
                            val = val.encode('utf-8')
                        v = base64.b64encode(val).decode()
                    except Exception:
                        v = None
                toks.append({'start': s, 'end': e, 'value': v})
        except Exception:
            continue
        out.append({'file': p, 'strings': toks})
        n += 1
        if n >= limit:
            break
    if n >= limit:
        break
json.dump(out, sys.stdout)
