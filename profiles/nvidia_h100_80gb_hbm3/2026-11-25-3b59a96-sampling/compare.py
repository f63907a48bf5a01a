import csv,glob,statistics as st,math,sys,collections
base=sys.argv[1]
variants=sys.argv[2].split(',')
rounds=tuple(range(1, int(sys.argv[3]) + 1)) if len(sys.argv) > 3 else (1, 2, 3)
def load(d):
    pts={}
    for f in glob.glob(f'{base}/{d}/*.csv'):
        for r in csv.DictReader(open(f)):
            pts[(r['kernel'],int(r['m']))]=r
    return pts
data={v:[load(f'sampling{i}_{v}') for i in rounds] for v in variants}
print('| criterion | round | points ok | samples | at <=3 | at 5 | median ci95 / time | p90 ci95 |')
for v in variants:
    for i,pts in zip(rounds,data[v]):
        ok=[r for r in pts.values() if r['status']=='ok']
        s=sum(int(r['samples']) for r in ok)
        rel=sorted(float(r['ci95_us'])/float(r['kernel_time']) for r in ok)
        print(f"| {v} | {i} | {len(ok)} | {s} | {sum(int(r['samples'])<=3 for r in ok)} | {sum(int(r['samples'])==5 for r in ok)} | {100*st.median(rel):.2f}% | {100*rel[int(.9*len(rel))]:.2f}% |")
# run-to-run spread of medians: per point relative sd of the 3 rounds' medians
keys=None
for v in variants:
    for pts in data[v]:
        k={kk for kk,r in pts.items() if r['status']=='ok'}
        keys=k if keys is None else keys&k
print('points ok in every run:',len(keys))
print('| criterion | samples (3 rounds) | vs stderr | median of recorded ci95 | run-to-run rel sd of medians: median | p75 | p90 | mean |')
tot0=None
for v in variants:
    tot=sum(int(pts[k]['samples']) for pts in data[v] for k in keys)
    if tot0 is None: tot0=tot
    sp=sorted(st.stdev([float(pts[k]['kernel_time']) for pts in data[v]])/st.mean([float(pts[k]['kernel_time']) for pts in data[v]]) for k in keys)
    rel=sorted(float(pts[k]['ci95_us'])/float(pts[k]['kernel_time']) for pts in data[v] for k in keys)
    print(f"| {v} | {tot} | {100*(tot/tot0-1):+.1f}% | {100*st.median(rel):.2f}% | {100*st.median(sp):.2f}% | {100*sp[int(.75*len(sp))]:.2f}% | {100*sp[int(.9*len(sp))]:.2f}% | {100*st.mean(sp):.2f}% |")
# per kernel
print('per kernel samples:')
for kern in sorted({k for k,m in keys}):
    print(kern, {v: sum(int(pts[k]['samples']) for pts in data[v] for k in keys if k[0]==kern) for v in variants})
# Pairwise: median of |median_run_a - median_run_b| between rounds of same criterion
