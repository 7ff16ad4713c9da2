#!/usr/bin/env python3
"""Summarize sweep jsonl files in a folder -> summary.json, summary.md (in that folder).
Usage: python3 scripts/text-model/summarize.py [FOLDER]   (default build/text-model/sweep)"""
import glob, json, os, sys
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build', 'text-model', 'sweep'); rows = []
def first(ev, f):
    for e in ev:
        if f(e): return e['tokens']
    return None
def fmt(x, p='%.2e'):
    return '—' if x is None else (p % x)
md_curves = []
for fn in sorted(glob.glob(os.path.join(d, '*.jsonl'))):
    L = [json.loads(l) for l in open(fn) if l.strip()]
    if not L: continue
    cfg = L[0]['config']; ev = [e for e in L if 'heldout' in e]; done = [e for e in L if 'done' in e]
    if not ev: continue
    fin = ev[-1]
    r = dict(name=cfg['name'], tok=cfg['tok'], pos=cfg['pos'] + ('' if not cfg['repeat'] else '/' + cfg.get('rep_layout', 'fixed')), d=cfg['d'], heads=cfg['heads'], T=cfg['T'], B=cfg['B'], lr=cfg['lr'],
             warmup_steps=cfg['warmup_steps'], repeat=cfg['repeat'], planned_tokens=cfg['tokens'], steps_planned=cfg['steps'],
             tokens=fin['tokens'], heldout=fin['heldout'], bigram=cfg['bigram'], vs_bigram=fin['heldout'] / cfg['bigram'] - 1,
             in_context=fin['in_context'], ind_L2=fin['ind_best_L2'], prev_L1=fin['prev_best_L1'],
             best_ind_L2=max(e['ind_best_L2'] for e in ev), min_in_context=min(e['in_context'] for e in ev),
             tok_ic_02=first(ev, lambda e: e['in_context'] < -0.2), tok_ic_10=first(ev, lambda e: e['in_context'] <= -1.0),
             tok_ind_04=first(ev, lambda e: e['ind_best_L2'] >= 0.4), tok_prev_04=first(ev, lambda e: e['prev_best_L1'] >= 0.4),
             cut_by_wall=done[0]['cut_by_wall'] if done else None, wall=done[0]['wall'] if done else fin['wall'],
             tok_per_s=done[0]['tok_per_s'] if done else None, diverged=any('diverged' in e for e in L), torch=cfg.get('torch'))
    rows.append(r)
    md_curves.append('\n### %s\n\n| step | tokens | held-out | in-context | ind L2 (best) | prev L1 (best) | ind per head L1 / L2 | lr |\n|---|---|---|---|---|---|---|---|\n' % r['name'] +
        ''.join('| %d | %.2e | %.3f | %.2f | %.2f | %.2f | %s / %s | %.1e |\n' % (e['step'], e['tokens'], e['heldout'], e['in_context'], e['ind_best_L2'], e['prev_best_L1'],
                ','.join('%.2f' % x for x in e['induction'][0]), ','.join('%.2f' % x for x in e['induction'][-1]), e['lr']) for e in ev))
json.dump(rows, open(os.path.join(d, 'summary.json'), 'w'), indent=1)
hdr = '| config | tok | pos | H | T | B | lr | rep | tokens seen | held-out (nats/tok) | bigram | in-context | ind L2 | prev L1 | tok: ic<-0.2 | tok: ic≤-1 | tok: ind≥0.4 | tok: prev≥0.4 | wall s | tok/s |\n' + '|---' * 20 + '|\n'
body = ''.join('| %s | %s | %s | %d | %d | %d | %g | %g | %.2e%s | %.3f | %.3f | %.2f | %.2f | %.2f | %s | %s | %s | %s | %.0f | %s |\n' % (
    r['name'], r['tok'], r['pos'], r['heads'], r['T'], r['B'], r['lr'], r['repeat'], r['tokens'], ' (cut)' if r['cut_by_wall'] else '', r['heldout'], r['bigram'],
    r['in_context'], r['ind_L2'], r['prev_L1'], fmt(r['tok_ic_02']), fmt(r['tok_ic_10']), fmt(r['tok_ind_04']), fmt(r['tok_prev_04']), r['wall'], fmt(r['tok_per_s'], '%.0f')) for r in rows)
open(os.path.join(d, 'summary.md'), 'w').write('# Sweep summary\n\n' + hdr + body + '\n## Curves\n' + ''.join(md_curves))
print(hdr + body)
