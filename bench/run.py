"""wo benchmark suite.  Scripts, not tests: results go to bench/results/ (JSON + PNG plots).

    python bench/run.py [--quick] [--model M] [--sections core,grid,throughput,search,learning,
                        scaling,memory,speedup,hashsweep]

* core       EWT test (dev with --quick) as bags and full trees, one ``wo linearize`` process
             each (times include start-up and model loading); BLEU + signature, s/sentence,
             peak RSS.
* grid       Table 7 of Zhang & Clark (2015): dev BLEU for no/50%/all POS x no/50%/all heads.
* throughput new edges scored per second per core, pops/s, sentences/s at fixed pop budgets.
* search     BLEU against the pop budget (0.5n ... 64n) and against a wall-clock timeout per
             sentence (0.01 s ... 5 s), as Figure 7 of the paper.
* learning   dev BLEU and seconds per epoch from the model's training record (Figures 4-6).
* scaling    sentences/s with --jobs 1 and 2 (median of 3); time per sentence against length.
* memory     peak RSS per worker, model size on disk.
* speedup    Cython decoder against the pure-Python reference (same model, budget, output).
* hashsweep  weight-table size 2^18 ... 2^24: BLEU, speed, size (trains small models; slow).

``summary.json`` always carries edges_per_second_per_core, sentences_per_second,
cython_speedup, jobs2_speedup, epoch_seconds, peak_rss_mb and bleu_by_timeout once the
sections that produce them have run.
"""
import argparse
import json
import os
import time

from common import ROOT, WO, bleu, conllu_blocks, cpu_name, run_timed, write_conllu_blocks

EWT = os.path.join(ROOT, "corpora", "ud-en-ewt")
RES = os.path.join(ROOT, "bench", "results")
ALL = ["core", "grid", "throughput", "search", "learning", "scaling", "memory", "speedup", "hashsweep"]


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def plot(name, xs_list, ys_list, labels, xlabel, ylabel, title, logx=False):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for xs, ys, lab in zip(xs_list, ys_list, labels):
        ax.plot(xs, ys, marker="o", label=lab)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if any(labels):
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(RES, name), dpi=110)
    plt.close(fig)


def run_linearize(model, src, out, given, extra=()):
    """``wo linearize`` in a child process: (wall seconds, peak RSS MB of the child, rows)."""
    r = run_timed([*WO, "linearize", "--model", model, "--input", src, "--output", out, "--given", given,
                   "--format", "jsonl", "--quiet", *extra], ok=(0, 1))
    rows = [json.loads(x) for x in open(out, encoding="utf-8")]
    return r.wall_s, r.rss_mb, rows


def refs_of(path):
    from wo.io import read_conllu

    return [s.text() for s in read_conllu(path)]


def bleu_rows(rows, refs):
    return bleu([r["tokens"] for r in rows], refs)


def dev_items(n, given="none", seed=1):
    from wo.io import read_conllu, scramble
    from wo.dep.linearizer import given_for

    sents = read_conllu(os.path.join(EWT, "en_ewt-ud-dev.conllu.xz"))[:n]
    items = []
    for i, s in enumerate(sents):
        sc, _ = scramble(s, seed, i)
        pos, heads = given_for(sc, given, 1.0, 1.0, seed, i)
        items.append((sc.forms, pos, heads))
    return sents, items


def decode_items(lin, items):
    out, t0 = [], time.perf_counter()
    for w, p, h in items:
        out.append(lin.linearize(w, p, h))
    return out, time.perf_counter() - t0


def bar(name, labels, values, ylabel, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.bar(labels, values, color="#4878a8")
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:,.3g}", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(os.path.join(RES, name), dpi=110)
    plt.close(fig)


def summary_plots(S):
    """Plots of the sections whose numbers are tables: throughput, memory, Cython speedup."""
    if "throughput" in S:
        T = S["throughput"]
        plot("throughput.png", [[t["budget_factor"] for t in T[g]] for g in ("none", "full")],
             [[t["edges_per_second"] / 1e6 for t in T[g]] for g in ("none", "full")],
             ["bags of words", "full trees"], "pop budget (pops per word)", "million new edges / s / core",
             "Throughput (EWT dev)")
    if "core" in S:
        bar("memory.png", ["bags: peak RSS", "full: peak RSS", "model on disk"],
            [S["core"]["bag"]["peak_rss_mb"], S["core"]["full"]["peak_rss_mb"],
             S.get("model_bytes", 0) / 2 ** 20], "MB", "Memory (one process, EWT test)")
    if "cython_speedup" in S:
        bar("cython_speedup.png", ["pure Python", "Cython"], [1.0, S["cython_speedup"]],
            "relative speed (same output)", "Cython decoder vs pure-Python reference")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "corpora", "models", "wo-ewt-dep.wo"))
    ap.add_argument("--quick", action="store_true", help="reduced version (< 5 minutes)")
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--sections", default=None, help="comma-separated subset of " + ",".join(ALL))
    args = ap.parse_args()
    os.makedirs(RES, exist_ok=True)
    from wo.dep.linearizer import Linearizer
    from wo.model import Model

    quick = args.quick
    sections = args.sections.split(",") if args.sections else (
        ["core", "throughput", "search", "learning", "scaling", "memory", "speedup"] if quick else
        [s for s in ALL if s != "hashsweep"])
    model = Model.load(args.model)
    S = {"cpu": cpu_name(), "machine": f"{os.cpu_count()} cores", "model": os.path.relpath(args.model, ROOT),
         "quick": quick, "date": time.strftime("%Y-%m-%d %H:%M")}
    ndev = 300 if quick else 2001
    dev_path = os.path.join(EWT, "en_ewt-ud-dev.conllu.xz")
    if quick:   # a 500-sentence slice of dev keeps the whole-process runs short
        dev_path = write_conllu_blocks(os.path.join(RES, "dev500.conllu"), conllu_blocks(dev_path)[:500])

    if "core" in sections:
        split = "dev500" if quick else args.split
        src = dev_path if quick else os.path.join(EWT, f"en_ewt-ud-{split}.conllu.xz")
        refs = refs_of(src)
        S["core"] = {"split": split}
        for given, name in (("none", "bag"), ("full", "full")):
            wall, rss, rows = run_linearize(args.model, src, os.path.join(RES, f"ewt-{split}.{name}.jsonl"), given)
            sc = bleu_rows(rows, refs)
            dec = sum(r["seconds"] for r in rows)
            st = {}
            for r in rows:
                st[r["status"]] = st.get(r["status"], 0) + 1
            S["core"][name] = {
                "bleu": round(sc.bleu, 2), "signature": sc.signature, "exact": round(sc.exact, 2),
                "sentences": len(rows), "process_seconds": round(wall, 2),
                "seconds_per_sentence": round(wall / len(rows), 4),
                "decode_seconds_per_sentence": round(dec / len(rows), 4),
                "edges_per_second": round(sum(r["edges"] for r in rows) / dec), "peak_rss_mb": round(rss, 1),
                "status": st}
            print(name, json.dumps(S["core"][name]), flush=True)
        S["peak_rss_mb"] = max(S["core"][k]["peak_rss_mb"] for k in ("bag", "full"))

    if "grid" in sections:
        dev = os.path.join(EWT, "en_ewt-ud-dev.conllu.xz")
        refs = refs_of(dev)
        grid = {}
        for pname, pshare in (("no", None), ("50%", 0.5), ("all", 1.0)):
            for hname, hshare in (("no", None), ("50%", 0.5), ("all", 1.0)):
                given = {(False, False): "none", (True, False): "pos", (False, True): "heads",
                         (True, True): "full"}[(pshare is not None, hshare is not None)]
                extra = ["--reveal-pos", str(pshare or 1.0), "--reveal-heads", str(hshare or 1.0), "--jobs", "2"]
                _, _, rows = run_linearize(args.model, dev, os.path.join(RES, "grid.jsonl"), given, extra)
                grid[f"POS {pname} / heads {hname}"] = round(bleu_rows(rows, refs).bleu, 2)
                print(f"POS {pname} / heads {hname}", grid[f"POS {pname} / heads {hname}"], flush=True)
        S["table7_dev_bleu"] = grid

    if "throughput" in sections:
        T = {}
        for given in ("none", "full"):
            sents, items = dev_items(ndev, given)
            T[given] = []
            for bf in (2, 10, 30):
                lin = Linearizer(model, budget_factor=bf)
                res, secs = decode_items(lin, items)
                edges = sum(r.edges for r in res)
                pops = sum(r.pops for r in res)
                T[given].append({"budget_factor": bf, "edges_per_second": round(edges / secs),
                                 "pops_per_second": round(pops / secs), "sentences_per_second": round(len(res) / secs, 1)})
                print("throughput", given, T[given][-1], flush=True)
        S["throughput"] = T
        default = [t for t in T["none"] if t["budget_factor"] == 10][0]
        S["edges_per_second_per_core"] = default["edges_per_second"]
        S["sentences_per_second"] = default["sentences_per_second"]

    if "search" in sections:
        n = 300 if quick else 600
        sents, items = dev_items(n)
        refs = [s.text() for s in sents]
        from wo.eval import score

        by_budget = []
        for bf in ((0.5, 2, 8, 32) if quick else (0.5, 1, 2, 4, 8, 16, 32, 64)):
            res, secs = decode_items(Linearizer(model, budget_factor=bf), items)
            by_budget.append([bf, round(score([r.text for r in res], refs).bleu, 2), round(secs / n, 4)])
            print("budget", by_budget[-1], flush=True)
        by_timeout = []
        nt = 60 if quick else 100
        for to in ((0.01, 0.1, 0.5) if quick else (0.01, 0.03, 0.1, 0.3, 1.0, 5.0)):
            res, secs = decode_items(Linearizer(model, max_pops=10 ** 9, timeout=to), items[:nt])
            by_timeout.append([to, round(score([r.text for r in res], refs[:nt]).bleu, 2)])
            print("timeout", by_timeout[-1], round(secs / nt, 4), flush=True)
        S["timeout_sentences"] = nt
        S["bleu_by_budget"] = by_budget
        S["bleu_by_timeout"] = by_timeout
        S["search_sentences"] = n
        plot("bleu_by_budget.png", [[b[0] for b in by_budget]], [[b[1] for b in by_budget]], [""],
             "pop budget (pops per word)", "BLEU (dev, bags)", "Quality against search budget", logx=True)
        plot("bleu_by_timeout.png", [[b[0] for b in by_timeout]], [[b[1] for b in by_timeout]], [""],
             "timeout per sentence (s)", "BLEU (dev, bags)", "Quality against search time", logx=True)

    if "learning" in sections:
        eps = model.header.get("training", {}).get("epochs", [])
        S["epoch_seconds"] = [e["seconds"] for e in eps]
        S["learning_curve"] = [[e["epoch"], e.get("dev_bleu"), e["seconds"], e.get("reached_gold")] for e in eps]
        if eps:
            plot("learning_bleu.png", [[e["epoch"] for e in eps]], [[e.get("dev_bleu") or 0 for e in eps]], [""],
                 "training epoch", "dev BLEU (bags)", "Learning curve")
            plot("learning_seconds.png", [[e["epoch"] for e in eps]], [[e["seconds"] for e in eps]], [""],
                 "training epoch", "seconds per epoch", "Training time per epoch")

    if "scaling" in sections:
        dev = dev_path
        times = {1: [], 2: []}
        outs = {}
        for rep in range(1 if quick else 3):
            for jobs in (1, 2):
                out = os.path.join(RES, f"jobs{jobs}.jsonl")
                wall, _, rows = run_linearize(args.model, dev, out, "none", ["--jobs", str(jobs)])
                times[jobs].append(wall)
                outs[jobs] = [{k: v for k, v in r.items() if k != "seconds"} for r in rows]
                print(f"jobs {jobs}: {wall:.2f}s", flush=True)
        S["jobs_seconds"] = {str(k): v for k, v in times.items()}
        S["jobs2_speedup"] = round(med(times[1]) / med(times[2]), 3)
        S["jobs_outputs_identical"] = outs[1] == outs[2]
        rows = [json.loads(x) for x in open(os.path.join(RES, "jobs1.jsonl"))]
        bylen = {}
        for r in rows:
            bylen.setdefault(len(r["tokens"]) // 5 * 5, []).append(r["seconds"])
        lens = sorted(bylen)
        S["seconds_by_length"] = [[L, round(sum(bylen[L]) / len(bylen[L]), 5), len(bylen[L])] for L in lens]
        plot("seconds_by_length.png", [lens], [[sum(bylen[L]) / len(bylen[L]) for L in lens]], [""],
             "sentence length (words, bins of 5)", "seconds per sentence", "Decoding time against length")
        plot("jobs_scaling.png", [[1, 2]], [[len(rows) / med(times[1]), len(rows) / med(times[2])]], [""],
             "--jobs", "sentences per second", "Scaling across processes")

    if "memory" in sections:
        if "core" in S:
            rss = S["core"]["bag"]["peak_rss_mb"]
        else:
            _, rss, _ = run_linearize(args.model, dev_path, os.path.join(RES, "mem.jsonl"), "none")
        S["peak_rss_mb_worker"] = round(rss, 1)
        S.setdefault("peak_rss_mb", round(rss, 1))
        S["model_bytes"] = os.path.getsize(args.model)

    if "speedup" in sections:
        from wo.dep.core import DepSearch
        from wo.dep.instance import make_instance
        from wo.dep.reference import ReferenceDecoder

        sents, items = dev_items(40 if quick else 120)
        core = DepSearch(model.weights, model.hash_bits)
        ref = ReferenceDecoder(model.weights, model.hash_bits)
        insts = [make_instance(w, p, h, model.tagdict) for w, p, h in items if len(w) <= 25]
        tc = tp = 0.0
        same = True
        for inst in insts:
            beam, pops = 4 * inst.n, 4 * inst.n
            t0 = time.perf_counter()
            a = core.decode(*inst.arrays(), beam, pops, 0.0, 0)
            t1 = time.perf_counter()
            b = ref.decode(*inst.arrays(), beam, pops)
            t2 = time.perf_counter()
            tc += t1 - t0
            tp += t2 - t1
            same = same and bool((a[0] == b[0]).all())
        S["cython_speedup"] = round(tp / tc, 1)
        S["speedup_sentences"] = len(insts)
        S["speedup_outputs_identical"] = same
        print("cython speedup", S["cython_speedup"], "identical", same, flush=True)

    if "hashsweep" in sections:
        from wo.io import read_conllu
        from wo.eval import score
        from wo.dep.train import train

        tr = read_conllu(os.path.join(EWT, "en_ewt-ud-train.conllu.xz"))[:3000]
        sents, items = dev_items(300)
        refs = [s.text() for s in sents]
        sweep = []
        for bits in (18, 20, 22, 24):
            path = os.path.join(RES, f"sweep{bits}.wo")
            t0 = time.perf_counter()
            train(tr, [], 2, path, hash_bits=bits, log=lambda m: None)
            tsec = time.perf_counter() - t0
            m = Model.load(path)
            res, secs = decode_items(Linearizer(m), items)
            sweep.append({"hash_bits": bits, "bleu": round(score([r.text for r in res], refs).bleu, 2),
                          "decode_seconds_per_sentence": round(secs / len(items), 4),
                          "edges_per_second": round(sum(r.edges for r in res) / secs),
                          "train_seconds": round(tsec, 1), "model_bytes": os.path.getsize(path)})
            os.unlink(path)
            print("hash sweep", sweep[-1], flush=True)
        S["hash_sweep"] = sweep
        plot("hash_sweep.png", [[s["hash_bits"] for s in sweep]], [[s["bleu"] for s in sweep]], [""],
             "log2 weight-table size", "BLEU (dev[:300], 3k-sentence model)", "Weight-table size")

    path = os.path.join(RES, "summary.json")
    old = json.load(open(path)) if os.path.exists(path) else {}
    old.update(S)
    json.dump(old, open(path, "w"), indent=1)
    summary_plots(old)
    print(json.dumps(S, indent=1))


if __name__ == "__main__":
    main()
