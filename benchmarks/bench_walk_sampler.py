"""The default walk's sampler settings, as a user meets them: fresh-process fits.

    python3 benchmarks/bench_walk_sampler.py [--logs trec clara2 wscd]
        [--settings 1000/0.95 500/0.9 500/0.8] [--checks wscd] [--rhat-parts wscd --draws 1000]
        [--gradient]

For each log (TREC Session 2013 bundled; CLARA2 and WSCD from the shared samples, skipped
when absent) and each ``tune/target_accept`` pair, writes the default spec
(``models/walk.toml``) with those two keys changed and runs ``bayeschain fit LOG
[--results PAGES] --spec SPEC -o post.nc`` as a fresh process (warm compile cache: one
fit runs first), timed from the outside with ``/usr/bin/time``'s peak memory, and prints
the fit's own diagnostics line (largest R-hat, smallest bulk ESS, divergences, and a
resampling at target_accept 0.99 when draws diverged).

``--fixed LOG`` instead fits LOG in process with the default spec (every document sampled:
``documents = "sampled"``, as in ``--rhat-parts`` and ``--checks``) at each setting for a
fixed number of draws (``--draws``, per chain, no stopping rule) and prints the time and
each quantity's smallest bulk ESS and largest R-hat: how well each setting mixes.

``--independent Q`` prints the largest rank R-hat among ``Q`` quantities of exactly
independent draws (2 chains of standard normals, three seeds) at 600 to 3,000 draws per
chain: what R-hat <= 1.01 asked of every one of many documents costs by their number
alone.

``--rhat-parts LOG`` fits LOG in process with the default spec for ``--draws`` per chain
(no stopping rule) and prints, by ArviZ, each quantity's largest bulk and tail (folded)
R-hat at half and all the draws and its bulk ESS of the draws and of the folded draws,
each beside independent normal draws of the same shape: which half of the rank R-hat
sets the number of draws.

``--gradient`` instead times one log density with gradient of the default walk on each log
(the pages and model ``bayeschain fit`` builds: clicks per document where pairs shown 10
times or more hold a quarter of the impressions), in process: the best of 5 x 100 calls of
``WalkModel.logp`` at the sampler's starting point, with the blocks the likelihood chooses
(``likelihood.blocks``: how many left states a lane holds, and 32 or 8 lanes a block)
beside fixed splits of 1, 4 and 16 states a lane at each lane count.

``--checks LOG`` instead fits LOG in process with the default spec and prints every
check the sampler makes while it samples (draws per chain, smallest bulk ESS, largest
R-hat, the quantity holding each back) and, at the end, the posterior's diagnostics per
quantity: which of the ESS and R-hat rules sets the number of draws.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from click_model_peers import load_log, present_logs  # noqa: E402

TREC = ROOT / "data" / "trec_session_2013" / "sessiontrack2013.xml.gz"


def every_document_sampled():
    """The default spec with ``documents = "sampled"``: ``--checks``, ``--fixed`` and
    ``--rhat-parts`` study how NUTS mixes over every document (the default, ``"auto"``,
    integrates WSCD's documents out by Laplace)."""
    from bayeschain.inference import load_spec

    return load_spec("walk").with_keys("examination", documents="sampled")


def spec_with(tune: int, target_accept: float, folder: Path) -> Path:
    """The default walk spec with ``tune`` and ``target_accept`` replaced."""
    from bayeschain.inference import load_spec

    spec = load_spec("walk").with_keys("sampler", tune=tune, target_accept=target_accept) \
        .with_keys("model", name=f"walk-{tune}-{target_accept}")
    path = folder / f"walk-{tune}-{target_accept}.toml"
    path.write_text(spec.text, encoding="utf-8")
    return path


def log_files(name: str, folder: Path) -> list[str]:
    """``[LOG]`` or ``[LOG, --results, PAGES]`` for ``bayeschain fit``."""
    if name == "trec":
        return [str(TREC)]
    from bayeschain.io import write_canonical

    log = load_log(name)
    events, pages = folder / f"{name}.parquet", folder / f"{name}_pages.parquet"
    write_canonical(log, events, force=True)
    log.results.to_parquet(pages, index=False)
    return [str(events), "--results", str(pages)]


def fresh_fit(files: list[str], spec: Path, out: Path) -> tuple[float, float, str]:
    """Wall seconds, peak MB and the diagnostics line of one fresh-process fit."""
    cmd = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "bayeschain", "fit", *files,
           "--spec", str(spec), "-o", str(out), "--force"]
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(f"fit failed: {done.stderr[-2000:]}")
    peak = float(done.stderr.strip().splitlines()[-1]) / 1024
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("NUTS:")), "")
    return wall, peak, line.removeprefix("NUTS: ")


def checks(name: str) -> None:
    """The sampler's checks while it samples, and the diagnostics per quantity."""
    import warnings

    import numpy as np

    import bayeschain
    from bayeschain.inference.walk import sampler
    from bayeschain.posterior.diagnostics import rhat_and_ess

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()

    def seen(quantities):
        """The sampler's own rule (:func:`sampler._worst`), per quantity."""
        ess, rhat = {}, {}
        for k, v in quantities.items():
            r, e = rhat_and_ess(v)
            ess[k] = 0.0 if np.isnan(e).any() else float(np.min(e, initial=np.inf))
            rhat[k] = float(np.nanmax(r, initial=0.0))
        n = next(iter(quantities.values())).shape[1]
        low, high = min(ess, key=ess.get), max(rhat, key=rhat.get)
        print(f"  {time.perf_counter() - t0:6.1f} s  {n:5d} draws per chain: bulk ESS "
              f"{ess[low]:7.0f} ({low}), R-hat {rhat[high]:.4f} ({high})", flush=True)
        return float(ess[low]), rhat[high]

    sampler._worst = seen
    log = bayeschain.read_clicks(TREC) if name == "trec" else load_log(name)
    post = bayeschain.fit(log, every_document_sampled())
    print(f"  {time.perf_counter() - t0:6.1f} s in all, {post.n_draws} draws")
    print(post.diagnostics(sampled_only=True).to_string(index=False))


def fixed(name: str, settings: list[str], draws: int) -> None:
    """Fits of ``draws`` per chain at each ``tune/target_accept``, diagnostics per quantity."""
    import warnings

    import bayeschain

    warnings.simplefilter("ignore")
    log = bayeschain.read_clicks(TREC) if name == "trec" else load_log(name)
    for setting in settings:
        tune, target = setting.split("/")
        t = time.perf_counter()
        post = bayeschain.fit(log, every_document_sampled(), draws=draws, tune=int(tune),
                              target_accept=float(target), min_ess=0)
        table = post.diagnostics(sampled_only=True)
        print(f"{name}, {tune} / {target}, 2 x {draws} draws: {time.perf_counter() - t:.1f} s, "
              f"{post.divergences()} divergences")
        print(table.to_string(index=False), flush=True)


def rhat_parts(name: str, draws: int) -> None:
    """Which half of the rank R-hat holds each quantity back (Vehtari et al. 2021: the
    largest of the split R-hat of the rank-normalised draws, "bulk", and of the folded
    draws ``|x - median|``, "tail"), after a fit of ``draws`` per chain with no stopping
    rule, by ArviZ (the peer, not the sampler's own code), beside the same for independent
    normal draws of the same shape: bulk and folded R-hat at ``draws // 2`` and ``draws``
    per chain, and bulk ESS of the draws and of the folded draws."""
    import warnings

    import arviz as az
    import numpy as np

    import bayeschain

    warnings.simplefilter("ignore")
    log = bayeschain.read_clicks(TREC) if name == "trec" else load_log(name)
    t = time.perf_counter()
    post = bayeschain.fit(log, every_document_sampled(), draws=draws, min_ess=0)
    print(f"{name}: the default fit (every document sampled), 2 x {draws} draws, "
          f"{time.perf_counter() - t:.1f} s, {post.divergences()} divergences")

    def varying(x):
        flat = x.reshape(x.shape[0], x.shape[1], -1)
        return flat[:, :, np.ptp(flat, axis=(0, 1)) > 0]      # constants have none

    def parts(flat):
        fold = np.abs(flat - np.median(flat.reshape(-1, flat.shape[2]), axis=0))
        def dataset(values):
            return az.convert_to_dataset({"x": values})

        out = []
        for n in (draws // 2, draws):
            out += [float(np.nanmax(az.rhat(dataset(flat[:, :n]), method=m)["x"].values))
                    for m in ("z_scale", "folded")]
        ess, ess_fold = (az.ess(dataset(v), method="bulk")["x"].values for v in (flat, fold))
        return flat.shape[2], out, ess, ess_fold

    rng = np.random.default_rng(0)
    print(f"{'quantity':>16} {'n':>6}  R-hat at {draws // 2}: bulk  tail   at {draws}: bulk  "
          f"tail   bulk ESS min/median  of folded draws")
    for key, v in post.posterior.data_vars.items():
        if "chain" not in v.dims:
            continue
        drawn = varying(v.values)          # beside as many independent quantities
        for label, x in ((key, drawn), ("  independent", rng.standard_normal(drawn.shape))):
            n, r, ess, ess_fold = parts(x)
            if n:
                print(f"{label:>16} {n:6d}  {r[0]:14.4f} {r[1]:.4f} {r[2]:14.4f} {r[3]:.4f}"
                      f"   {ess.min():6.0f} / {np.median(ess):6.0f}  {ess_fold.min():6.0f} / "
                      f"{np.median(ess_fold):6.0f}", flush=True)


def independent(quantities: int) -> None:
    """The largest rank R-hat of ``quantities`` independent normal quantities."""
    import numpy as np

    from bayeschain.posterior.diagnostics import rank_rhat

    for n in (600, 1000, 1480, 3000):
        worst = [float(np.nanmax(rank_rhat(np.random.default_rng(seed).standard_normal(
            (2, n, quantities))))) for seed in range(3)]
        print(f"{quantities:,} quantities, 2 x {n} independent draws: largest R-hat "
              + ", ".join(f"{w:.4f}" for w in worst))


def gradient(names: list[str]) -> None:
    """One log density with gradient of the default walk per log, the chosen blocks beside
    fixed splits of the left states (see the module)."""
    import numpy as np

    import bayeschain
    from bayeschain.inference.walk import likelihood
    from bayeschain.inference.walk.data import page_data, recurring_share
    from bayeschain.inference.walk.fit import auto_clicks
    from bayeschain.inference.walk.model import WalkModel

    spec = bayeschain.inference.load_spec("walk")
    least = spec.section("examination")["min_impressions"]
    print("| log | clicks | configurations | left states | states a lane | blocks | "
          "one log density with gradient, ms |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        log = bayeschain.read_clicks(TREC) if name == "trec" else load_log(name)
        document = auto_clicks(recurring_share(log, least)) == "document"
        data = page_data(log, clicks="document" if document else "rank",
                         default_length=spec.ranks, min_impressions=least)
        model = WalkModel(data, clicks="document" if document else "pooled")
        theta = model.initial_point(np.random.default_rng(0))
        chosen = model._blocks
        if not len(chosen[0]):
            print(f"| {name} | | {data.lengths.size:,} | 0 | | 0 | |")
            continue
        splits = [(None, None)] + [(k, lanes) for lanes in (likelihood.LANES,
                                                            likelihood.NARROW_LANES)
                                   for k in (1, 4, 16)]
        for k, lanes in splits:
            if k is None:
                model._blocks = chosen
            else:
                items = likelihood._items(data.lengths, data.counts.state_ptr, k)
                model._blocks = (items, np.r_[np.arange(0, len(items), lanes),
                                              len(items)].astype(np.int64))
            model._arguments = None              # the kernel's arguments read them again
            model.logp(theta)
            best = min(_timed(model, theta) for _ in range(5))
            items, starts = model._blocks
            per = int((items[:, 2] - items[:, 1]).max())
            used = likelihood.block_lanes(starts)
            label = (f"chosen (items of up to {per}, {used} lanes)" if k is None
                     else f"at most {k}, {used} lanes")
            print(f"| {name} | {'document' if document else 'rank'} | {data.lengths.size:,} | "
                  f"{data.counts.states.size:,} | {label} | {len(starts) - 1:,} | "
                  f"{best * 1e3:.3f} |", flush=True)
        model._blocks, model._arguments = chosen, None


def _timed(model, theta, calls: int = 100) -> float:
    t = time.perf_counter()
    for _ in range(calls):
        model.logp(theta)
    return (time.perf_counter() - t) / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", nargs="+", default=["trec", "clara2", "wscd"])
    ap.add_argument("--settings", nargs="+", default=["1000/0.95", "500/0.9", "500/0.8"],
                    help="tune/target_accept pairs")
    ap.add_argument("--checks", help="a log whose default fit's checks are printed")
    ap.add_argument("--gradient", action="store_true",
                    help="time one log density with gradient on each of --logs")
    ap.add_argument("--fixed", help="a log fitted in process for --draws at each setting")
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--independent", type=int, help="quantities of independent draws")
    ap.add_argument("--rhat-parts", help="a log whose fit of --draws per chain shows which "
                                         "half of the rank R-hat (bulk or tail) holds back")
    a = ap.parse_args()
    if a.rhat_parts:
        rhat_parts(a.rhat_parts, a.draws)
        return
    if a.independent:
        independent(a.independent)
        return
    if a.fixed:
        fixed(a.fixed, a.settings, a.draws)
        return
    if a.checks:
        checks(a.checks)
        return
    if a.gradient:
        gradient(["trec"] + present_logs([n for n in a.logs if n != "trec"])
                 if "trec" in a.logs else present_logs(a.logs))
        return
    logs = ["trec"] + present_logs([n for n in a.logs if n != "trec"]) \
        if "trec" in a.logs else present_logs(a.logs)
    skipped = sorted(set(a.logs) - set(logs))
    if skipped:
        print(f"skipped (their samples are not on this machine): {', '.join(skipped)}")
    print("| log | tune / target_accept | wall s | peak MB | R-hat / bulk ESS / divergences |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in logs:
            files = log_files(name, folder)
            warm = spec_with(200, 0.9, folder)
            fresh_fit(files, warm, folder / "warm.nc")        # compile caches warm
            for setting in a.settings:
                tune, target = setting.split("/")
                spec = spec_with(int(tune), float(target), folder)
                wall, peak, line = fresh_fit(files, spec, folder / "post.nc")
                print(f"| {name} | {tune} / {target} | {wall:.1f} | {peak:,.0f} | {line} |",
                      flush=True)


if __name__ == "__main__":
    main()
