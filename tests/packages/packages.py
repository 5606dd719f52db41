#!/usr/bin/env python3
"""tests/packages/packages.py TOP AILANG WORK [WORLDD STATIC_AILANG]: the JSON-level checks of
tests/packages/packages.sh over packages/quickstart and packages/se-tools.

Every transition is run the way a capsule runs it (`AILANG run --quiet
--caps "" --entry main --args-file F SRC`, empty environment but for
AILANG_RELAX_MODULES); the plans it prints are held to the laws of docs/design.md
§5.2 and the payloads of §5.4, the refusals to the refusal shape, the
finish phases to their documented outputs, and the manifests to docs/design.md §7
and the schema subset. With WORLDD, every tool also runs in a real capsule
(`worldd invoke`, the transition profile; effects answered by the test
broker). Prints one line per assertion: `0<TAB>name` (pass),
`1<TAB>name<TAB>why` (fail) or `2<TAB>name<TAB>why` (skip); the shell side
turns them into TAP."""
import json
import os
import re
import subprocess
import sys

TOP, AILANG, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
WORLDD = sys.argv[4] if len(sys.argv) > 5 else None
STATIC = sys.argv[5] if len(sys.argv) > 5 else None
SE = os.path.join(TOP, "packages", "se-tools")
N = [0]


def report(ok, name, why=""):
    print("%d\t%s\t%s" % (0 if ok else 1, name, why.replace("\n", " ")[:400]), flush=True)


def skip(name, why):
    print("2\t%s\t%s" % (name, why), flush=True)


def run(src, text):
    """main(text) of src; returns (rc, stdout without its one \\n, stderr)"""
    N[0] += 1
    args = os.path.join(WORK, "args%d.json" % N[0])
    with open(args, "w", encoding="utf-8") as f:
        f.write(json.dumps(text, ensure_ascii=False))
    p = subprocess.run([AILANG, "run", "--quiet", "--caps", "", "--entry", "main", "--args-file", args, src],
                       cwd=TOP, env={"AILANG_RELAX_MODULES": "1"}, capture_output=True, timeout=60)
    out = p.stdout.decode("utf-8", "replace")
    if out.endswith("\n"):
        out = out[:-1]
    return p.returncode, out, p.stderr.decode("utf-8", "replace")


def call(src, obj):
    rc, out, err = run(src, json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
    if rc != 0:
        return None, "exit %d: %s" % (rc, err)
    try:
        v = json.loads(out)
    except ValueError as e:
        return None, "output is not JSON (%s): %s" % (e, out[:200])
    if not isinstance(v, dict):
        return None, "output is not a JSON object: %s" % out[:200]
    return v, ""


# ---- docs/design.md §5.2: the plan laws ----
ID = re.compile(r"^[a-z0-9]{1,16}$")


def plan_violation(plan, declared):
    """None when plan obeys every law of §5.2, else the law it breaks"""
    if not isinstance(plan, dict):
        return "a plan is a JSON object"
    if set(plan) != {"plan", "effects", "finish", "result"}:
        return "exactly the members plan, effects, finish, result (got %s)" % sorted(plan)
    if plan["plan"] != "world/effect-plan/v1":
        return 'plan is "world/effect-plan/v1"'
    effects, finish, result = plan["effects"], plan["finish"], plan["result"]
    if not isinstance(effects, list):
        return "effects is an array"
    if not isinstance(finish, bool):
        return "finish is a bool"
    if result is not None and not isinstance(result, dict):
        return "result is null or an object"
    if len(effects) > 1:
        return "at most one effect"
    for e in effects:
        if not isinstance(e, dict) or set(e) != {"id", "effect", "scope", "cost", "payload"}:
            return "an effect has exactly id, effect, scope, cost, payload"
        if not isinstance(e["id"], str) or not ID.match(e["id"]):
            return "effect id matches [a-z0-9]{1,16}"
        if {"effect": e["effect"], "scope": e["scope"], "cost": e["cost"]} not in declared:
            return "the effect triple is one of declaredEffects"
        if not isinstance(e["payload"], dict):
            return "payload is an object"
        if len(json.dumps(e["payload"], separators=(",", ":"), ensure_ascii=False).encode()) > 1 << 20:
            return "payload is at most 1 MiB"
    if "world" in plan or (isinstance(result, dict) and "world" in result):
        return "no world key"
    if (len(effects) == 0) != isinstance(result, dict):
        return "zero effects if and only if result is an object"
    if finish and not effects:
        return "finish:true needs an effect"
    return None


# ---- docs/design.md §5.4: the payloads ----
def payload_violation(effect, p):
    def keys(*ks):
        return set(p) == set(ks)
    def strs(*ks):
        return all(isinstance(p.get(k), str) for k in ks)
    op = p.get("op")
    if effect == "Workspace.Read":
        ok = op == "read" and keys("op", "path") and strs("path")
    elif effect == "Workspace.Write":
        ok = (op == "write" and keys("op", "path", "content") and strs("path", "content")) or \
             (op == "edit" and keys("op", "path", "old_text", "new_text") and strs("path", "old_text", "new_text"))
    elif effect == "Ailang.Check":
        ok = op == "ai_check" and keys("op", "path") and strs("path")
    elif effect == "Ailang.Run":
        ok = (keys("path") or keys("path", "args_json")) and strs(*p)
    elif effect == "Ailang.Discover":
        ok = (op == "builtins_list" and keys("op", "flags") and isinstance(p["flags"], dict)) or \
             (op == "examples_search" and keys("op", "query") and strs("query"))
    elif effect == "Ailang.CLI":
        ok = (op in ("version", "builtins") and keys("op")) or \
             (op in ("check", "iface") and keys("op", "path") and strs("path"))
    elif effect == "Workspace.Exec":
        ok = (keys("command") or (keys("command", "args") and isinstance(p["args"], list) and
                                  all(isinstance(a, str) for a in p["args"]))) and strs("command")
    else:
        return "unknown effect %s" % effect
    return None if ok else "payload %s does not have the docs/design.md §5.4 shape of %s" % (json.dumps(p), effect)


def refusal_violation(plan):
    """a refusal: a lawful plan of no effect whose result is {"ok":false,"refused":TEXT}"""
    if not isinstance(plan, dict) or plan.get("effects") != [] or plan.get("finish") is not False:
        return "not a plan of no effect: %s" % json.dumps(plan)[:200]
    r = plan.get("result")
    if not isinstance(r, dict) or set(r) != {"ok", "refused"} or r["ok"] is not False or \
            not isinstance(r["refused"], str) or not r["refused"]:
        return 'result is not {"ok":false,"refused":WHY}: %s' % json.dumps(r)
    return None


# ---- the controls: the checkers can fail ----
decl = [{"effect": "Workspace.Read", "scope": "worktree", "cost": 1}]
good = {"plan": "world/effect-plan/v1", "finish": False, "result": None,
        "effects": [{"id": "e1", "effect": "Workspace.Read", "scope": "worktree", "cost": 1,
                     "payload": {"op": "read", "path": "a"}}]}
report(plan_violation(good, decl) is None, "control: a lawful plan passes the law checker")
bad_plans = [
    ("two effects", dict(good, effects=good["effects"] * 2)),
    ("bad id", dict(good, effects=[dict(good["effects"][0], id="E-1")])),
    ("undeclared triple", dict(good, effects=[dict(good["effects"][0], cost=2)])),
    ("payload not an object", dict(good, effects=[dict(good["effects"][0], payload=[])])),
    ("world key", dict(good, world={})),
    ("no effect and no result", dict(good, effects=[])),
    ("effect and a result", dict(good, result={"ok": True})),
    ("finish without effect", dict(good, effects=[], finish=True, result={})),
    ("extra member", dict(good, extra=1)),
]
for what, p in bad_plans:
    report(plan_violation(p, decl) is not None, "control: the law checker refuses a plan with %s" % what)
report(payload_violation("Workspace.Read", {"op": "read", "path": "a", "x": 1}) is not None,
       "control: the payload checker refuses an unknown payload key")
report(payload_violation("Workspace.Exec", {"command": "t", "cwd": "/"}) is not None and
       payload_violation("Workspace.Exec", {"command": "t", "args": [1]}) is not None and
       payload_violation("Workspace.Exec", {"command": "t", "args": []}) is None,
       "control: the Workspace.Exec payload checker refuses a cwd key and a non-string arg, admits args []")

# ---- the manifests ----
SUBSET = {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "minLength",
          "maxLength", "minimum", "maximum", "minItems", "maxItems", "description", "title"}
DESC_KEYS = {"id", "title", "description", "transitionFnFile", "transitionFn", "inputSchema", "outputSchema",
             "access", "declaredEffects", "semanticsEpoch"}
TID = re.compile(r"^[a-z0-9_-]+([./][a-z0-9_-]+)*$")


def schema_keywords(s, where, out):
    """every keyword used, with its JSON pointer"""
    if isinstance(s, bool):
        return
    if not isinstance(s, dict):
        out.append((where, "<not a schema>"))
        return
    for k, v in s.items():
        out.append((where, k))
        if k == "properties":
            for name, sub in v.items():
                schema_keywords(sub, "%s/properties/%s" % (where, name), out)
        elif k in ("items", "additionalProperties") and not isinstance(v, bool):
            schema_keywords(v, "%s/%s" % (where, k), out)


# transitionFnFile is relative to the repository root (world-publish reads
# a relative path from the current directory, and the packages are
# published from the root: docs/publishing.md)
def src_path(d):
    return os.path.join(TOP, d["transitionFnFile"])


def load_manifest(name):
    path = os.path.join(TOP, "packages", name, "transitions.json")
    try:
        with open(path, encoding="utf-8") as f:
            m = json.load(f)
        report(isinstance(m, list) and len(m) > 0, "%s/transitions.json parses as a JSON array of descriptors" % name)
        return m
    except (OSError, ValueError) as e:
        report(False, "%s/transitions.json parses" % name, str(e))
        return []


def check_descriptor(d, effectful):
    i = d.get("id", "?")
    errs = []
    unknown = set(d) - DESC_KEYS
    if unknown:
        errs.append("unknown keys %s" % sorted(unknown))
    if not isinstance(d.get("id"), str) or not TID.match(d["id"]) or len(d["id"]) > 128:
        errs.append("bad id")
    tool = d.get("id", "").replace("_", "_u").replace(".", "_d").replace("/", "_s")
    if len(tool) > 64:
        errs.append("tool name over 64 bytes")
    for k in ("title", "description"):
        if not isinstance(d.get(k), str) or not d[k]:
            errs.append("no %s" % k)
    f = d.get("transitionFnFile")
    if not isinstance(f, str) or f.startswith("/") or ".." in f.split("/") or not os.path.isfile(src_path(d)):
        errs.append("transitionFnFile %r is not an existing file relative to the repository root" % f)
    for sk in ("inputSchema", "outputSchema"):
        s = d.get(sk)
        if not isinstance(s, dict) or s.get("type") != "object":
            errs.append("%s is not an object schema" % sk)
            continue
        kws = []
        schema_keywords(s, "", kws)
        bad = sorted(set("%s %s" % (w or "(root)", k) for w, k in kws if k not in SUBSET))
        if bad:
            errs.append("%s uses keywords outside the subset: %s" % (sk, bad))
    if effectful:
        ins, outs = d.get("inputSchema", {}), d.get("outputSchema", {})
        if ins.get("additionalProperties") is not False:
            errs.append("inputSchema lacks additionalProperties: false")
        if "world" not in outs.get("required", []):
            errs.append("outputSchema does not require world")
        de = d.get("declaredEffects")
        if not isinstance(de, list) or len(de) != 1 or de[0].get("scope") != "worktree" or de[0].get("cost") != 1:
            errs.append("not one declared effect on worktree at cost 1: %s" % de)
        a = d.get("access")
        if not isinstance(a, dict) or set(a) != {"effect", "scope", "cost"} or a.get("scope") != "worktree" or \
                a.get("cost") != 0 or not isinstance(de, list) or not de or a.get("effect") != de[0].get("effect"):
            errs.append("access is not {effect, scope worktree, cost 0} of the declared effect: %s" % a)
    else:
        if d.get("declaredEffects") != [] or d.get("access") is not None:
            errs.append("a pure descriptor has declaredEffects [] and access null or absent")
    report(not errs, "descriptor %s follows docs/design.md §7 and the schema subset" % i, "; ".join(errs))


qs = load_manifest("quickstart")
report([d.get("id") for d in qs] == ["tools.echo"], "quickstart holds exactly tools.echo")
for d in qs:
    check_descriptor(d, False)
se = load_manifest("se-tools")
TOOLS = ["ailang-read", "ailang-write", "ailang-edit", "ailang-check", "ailang-run", "builtins-search",
         "examples-search", "ailang-cli", "workspace-exec"]
report(sorted(d.get("id") for d in se) == sorted(TOOLS), "se-tools holds exactly the nine tools",
       str([d.get("id") for d in se]))
ids = [d.get("id") for d in qs + se]
report(len(ids) == len(set(ids)), "descriptor ids are unique across the packages")
for d in se:
    check_descriptor(d, True)
by_id = {d.get("id"): d for d in se}

# ---- quickstart: tools.echo runs as a pure transition ----
echo = os.path.join(TOP, "packages", "quickstart", "echo.ail")
for args in ({"a": 1}, {}, {"name": "ada", "tags": ["x", "y"], "n": None, "deep": {"k": [1, 2.5]}}):
    text = json.dumps(args, separators=(",", ":"), sort_keys=True)
    rc, out, err = run(echo, text)
    report(rc == 0 and out == json.dumps({"echo": args}, separators=(",", ":"), sort_keys=True),
           "tools.echo returns {\"echo\": ARGS} for %s" % text, "rc=%d out=%s err=%s" % (rc, out, err))

# ---- se-tools: plan phases ----
GOOD = {
    "ailang-read": [{"path": "src/a.ail"}],
    "ailang-write": [{"path": "src/a.ail", "content": "export func main(input: string) -> string { input }\n"},
                     {"path": "notes/empty.txt", "content": ""}],
    "ailang-edit": [{"path": "src/a.ail", "old_text": "input }", "new_text": "\"{}\" }"}],
    "ailang-check": [{"path": "src/a.ail"}],
    "ailang-run": [{"path": "src/a.ail"}, {"path": "src/a.ail", "args_json": "{\"n\":3}"}],
    "builtins-search": [{}, {"query": "json"}],
    "examples-search": [{"query": "pattern"}],
    "ailang-cli": [{"op": "version"}, {"op": "builtins"}, {"op": "check", "path": "src/a.ail"},
                   {"op": "iface", "path": "src/a.ail"}],
    "workspace-exec": [{"command": "test"}, {"command": "test", "args": []},
                       {"command": "test", "args": ["-run=X", "./a/...", "\u00e9"]}],
}
EXPECT = {  # the payload each good call must plan (docs/design.md §5.4)
    "ailang-read": lambda a: {"op": "read", "path": a["path"]},
    "ailang-write": lambda a: {"op": "write", "path": a["path"], "content": a["content"]},
    "ailang-edit": lambda a: {"op": "edit", "path": a["path"], "old_text": a["old_text"], "new_text": a["new_text"]},
    "ailang-check": lambda a: {"op": "ai_check", "path": a["path"]},
    "ailang-run": lambda a: dict(a),
    "builtins-search": lambda a: {"op": "builtins_list", "flags": {}},
    "examples-search": lambda a: {"op": "examples_search", "query": a["query"]},
    "ailang-cli": lambda a: dict(a),
    "workspace-exec": lambda a: dict(a),
}
FINISH = {"ailang-check": True, "builtins-search": True}
PATHED = ["ailang-read", "ailang-write", "ailang-edit", "ailang-check", "ailang-run", "ailang-cli"]
UNSAFE = ["/etc/passwd", "../x", "a/../../x", "..", "", "a\u0000b"]

for tool in TOOLS:
    d = by_id.get(tool)
    if d is None:
        report(False, "%s has a descriptor" % tool)
        continue
    src = src_path(d)
    declared = d["declaredEffects"]
    eff = declared[0]["effect"]
    for args in GOOD[tool]:
        plan, why = call(src, {"phase": "plan", "args": args})
        name = "%s plan for %s" % (tool, json.dumps(args)[:60])
        if plan is None:
            report(False, name + " runs", why)
            continue
        v = plan_violation(plan, declared)
        report(v is None, name + " obeys the plan laws of docs/design.md §5.2", v or "")
        if v is not None:
            continue
        e = plan["effects"][0] if plan["effects"] else None
        report(e is not None and e["effect"] == eff and e["scope"] == "worktree" and e["cost"] == 1 and
               plan["result"] is None, name + ": one %s effect on worktree at cost 1, result null" % eff,
               json.dumps(plan)[:300])
        if e is None:
            continue
        pv = payload_violation(eff, e["payload"])
        report(pv is None and e["payload"] == EXPECT[tool](args), name + ": the docs/design.md §5.4 payload",
               pv or json.dumps(e["payload"]))
        report(plan["finish"] is FINISH.get(tool, False), name + ": finish is %s" %
               str(FINISH.get(tool, False)).lower())
    # refusals: an unknown key, args not an object, and (for path tools) unsafe paths
    base = GOOD[tool][-1]
    for args, what in [(dict(base, unexpected=1), "an unknown argument key"), ([], "args that are not an object"),
                       ({"zz": "x"}, "only an unknown key")]:
        plan, why = call(src, {"phase": "plan", "args": args})
        v = why or refusal_violation(plan) or plan_violation(plan, declared)
        report(v is None, "%s refuses %s with a lawful plan of no effect" % (tool, what), v or "")
        if v is None and what == "an unknown argument key":
            report("unexpected" in plan["result"]["refused"], "%s names the unknown key" % tool,
                   plan["result"]["refused"])
    if tool in PATHED:
        for p in UNSAFE:
            args = dict(base, path=p)
            plan, why = call(src, {"phase": "plan", "args": args})
            v = why or refusal_violation(plan) or plan_violation(plan, declared)
            report(v is None, "%s refuses the unsafe path %s" % (tool, json.dumps(p)), v or "")
    # control: the tool does not refuse everything
    plan, why = call(src, {"phase": "plan", "args": base})
    report(plan is not None and refusal_violation(plan) is not None and len(plan["effects"]) == 1,
           "control: %s plans an effect for %s" % (tool, json.dumps(base)[:60]), why)
    # nothing a tool emits carries a world key
    plan, why = call(src, {"phase": "other"})
    report(plan is not None and "world" not in plan and refusal_violation(plan) is None,
           "%s answers a malformed phase with a refusal, no world key" % tool, why)

# protected write targets (beyond the lexical rules)
for tool, extra in (("ailang-write", {"content": "x"}), ("ailang-edit", {"old_text": "a", "new_text": "b"})):
    src = src_path(by_id[tool])
    for p in (".git/hooks/pre-commit", ".GitHub/workflows/ci.yml", "sub/.gitmodules", ".ailang/config"):
        plan, why = call(src, {"phase": "plan", "args": dict(extra, path=p)})
        report(why == "" and refusal_violation(plan) is None, "%s refuses to write %s" % (tool, p), why)

# ---- finish phases, fed with the tool interpreter's real output ----
def fin(tool, args, status, output):
    src = src_path(by_id[tool])
    res = [{"id": "e1", "effect": by_id[tool]["declaredEffects"][0]["effect"], "status": status,
            "record": "sha256:" + "ab" * 32, "output": output}]
    return call(src, {"phase": "finish", "args": args, "results": res})


p = subprocess.run([AILANG, "builtins", "--json"], capture_output=True, timeout=60)
blist = json.loads(p.stdout)
handler_out = {"ok": True, "stdout": p.stdout.decode().rstrip("\n")}
for q in ("json", "STRING", "", "Option[", "no-such-builtin"):
    out, why = fin("builtins-search", {"query": q} if q else {}, "ok", handler_out)
    want = [b for b in blist["builtins"] if q.lower() in (b["name"] + "\0" + b["module"] + "\0" + b["signature"]).lower()]
    report(out == {"ok": True, "query": q, "count": len(want), "builtins": want},
           "builtins-search finish keeps the builtins matching %s (%d of %d)" % (json.dumps(q), len(want), blist["count"]),
           why or json.dumps(out)[:300])
out, why = fin("builtins-search", {}, "denied", None)
report(out is not None and out.get("ok") is False and out.get("status") == "denied" and "world" not in out,
       "builtins-search finish reports a denied effect", why or json.dumps(out))


def check_report(path, src_text):
    """the Ailang.Check handler output for a file, built from ailang-lite's own check --json
    the way docs/design.md §5.4 shapes it"""
    full = os.path.join(WORK, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(src_text)
    p = subprocess.run([AILANG, "check", "--json", path], cwd=WORK, capture_output=True, timeout=60)
    r = json.loads(p.stdout)
    errs = [{"code": e["code"], "message": e["message"], "file": e["file"]} for e in r["errors"]]
    stdout = json.dumps({"file": path, "check": {"passed": r["passed"], "error_count": r["error_count"], "errors": errs}},
                        separators=(",", ":"))
    return {"ok": p.returncode == 0, "argv": ["check", path], "exit_code": p.returncode, "stdout": stdout}, errs


h, _ = check_report("src/good.ail", "export func main(input: string) -> string { input }\n")
out, why = fin("ailang-check", {"path": "src/good.ail"}, "ok", h)
report(out == {"ok": True, "path": "src/good.ail", "passed": True, "error_count": 0, "errors": []},
       "ailang-check finish reports a good file as passed", why or json.dumps(out))
h, errs = check_report("src/bad.ail", "export func main(input: string) -> string { nope }\n")
out, why = fin("ailang-check", {"path": "src/bad.ail"}, "ok", h)
report(out == {"ok": True, "path": "src/bad.ail", "passed": False, "error_count": 1, "errors": errs} and
       errs and errs[0]["code"] == "TC_UNDEFINED_001",
       "ailang-check finish reports a bad file with its error", why or json.dumps(out))
out, why = fin("ailang-check", {"path": "x.ail"}, "ok", {"ok": False, "refused": "no such file"})
report(out == {"ok": False, "refused": "no such file"}, "ailang-check finish passes a handler refusal on",
       why or json.dumps(out))
out, why = fin("ailang-check", {"path": "x.ail"}, "failed", None)
report(out is not None and out.get("ok") is False and out.get("status") == "failed",
       "ailang-check finish reports a failed effect", why or json.dumps(out))

# ---- in a real capsule: worldd invoke (transition profile, the static
# interpreter, source staged as host/capsule/main.ail, the contract's
# environment); effects are answered by the test broker, which echoes the
# payload, so only the plans and the phases' plumbing are compared here ----
def invoke(src, args, effectful):
    cmd = [WORLDD, "invoke", "--ailang-bin", STATIC, "--source", src, "--input",
           json.dumps(args, separators=(",", ":"))]
    if effectful:
        cmd += ["--effectful", "--test-broker"]
    p = subprocess.run(cmd, cwd=WORK, capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


if WORLDD is None:
    skip("tools run in capsules", "no worldd given")
else:
    rc, out, err = invoke(echo, {"a": 1}, False)
    if rc == 10:
        skip("tools run in capsules", "capsule setup failed here: " + err.strip())
    else:
        report(rc == 0 and out.strip() == '{"echo":{"a":1}}', "in a capsule: tools.echo returns {\"echo\": ARGS}",
               "rc=%d out=%s err=%s" % (rc, out, err))
        for tool in TOOLS:
            d = by_id[tool]
            src = src_path(d)
            args = GOOD[tool][0]
            rc, out, err = invoke(src, args, True)
            try:
                got = json.loads(out)
            except ValueError:
                got = None
            direct, _ = call(src, {"phase": "plan", "args": args})
            ok = rc == 0 and isinstance(got, dict) and got.get("plan") == direct and \
                plan_violation(got["plan"], d["declaredEffects"]) is None and \
                got.get("finished") is FINISH.get(tool, False)
            report(ok, "in a capsule: %s plans its effect as in a direct run, finish phase %s" %
                   (tool, "ran" if FINISH.get(tool) else "not called"), "rc=%d out=%s err=%s" % (rc, out[:300], err))
            if FINISH.get(tool) and ok:
                o = got.get("output")
                report(isinstance(o, dict) and o.get("ok") is False and "world" not in o,
                       "in a capsule: %s finish answers an output it cannot read with ok:false" % tool, json.dumps(o))
            rc, out, err = invoke(src, dict(args, unexpected=1), True)
            try:
                got = json.loads(out)
            except ValueError:
                got = None
            report(rc == 0 and isinstance(got, dict) and refusal_violation(got.get("plan")) is None and
                   got.get("finished") is False,
                   "in a capsule: %s refuses an unknown key with a plan of no effect" % tool,
                   "rc=%d out=%s err=%s" % (rc, out[:300], err))
