"""Writes a measured sweep (bench/cpu/sweep.py's format) for the kernel of a `tlc recommend`
JSON: its fingerprint, and times that put the model's order upside down (the model's last
candidate measured fastest), so that a test sees which figure is whose.
    make_sweep.py RECOMMEND.json OUT.json [--target T] [--kernel NAME] [--defines N=V,...]"""
import json
import sys

rec = json.load(open(sys.argv[1]))
args = dict(zip(sys.argv[3::2], sys.argv[4::2]))
candidates = rec["candidates"]
sweep = dict(kernel=args.get("--kernel", rec["kernel"]), fingerprint=rec["fingerprint"], shape=rec["shape"],
             defines=dict(d.split("=") for d in args.get("--defines", "").split(",") if d),
             configs=[dict(values=c["values"], us=100.0 + 10 * (len(candidates) - c["rank"]))
                      for c in candidates])
sweep["configs"].append(dict(values=candidates[0]["values"], failed="a wrong result has no time"))
json.dump(dict(machine="a test machine", date="2026-11-29", tlc="0000000", target=args.get("--target", rec["target"]),
               sweeps=[sweep]), open(sys.argv[2], "w"), indent=1)
