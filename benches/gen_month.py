#!/usr/bin/env python3
"""Writes a month of Claude Code sessions into a fake HOME (issue 28's warm figure).

Usage: benches/gen_month.py HOME [SESSIONS] [SEED]   (default 150 sessions, seed 1)

Sessions are spread over the 30 days of 2026-04 (5 a day by default) across 6 projects, under
HOME/.claude/projects/<project>/<uuid>.jsonl as Claude Code writes them. Each session has 6 to 20
turns; each turn a prompt and 2 to 8 API messages, each message a tool call (Bash, Read, Edit,
Grep; about 1 in 12 fails) written as Claude Code streams it (two records per message: the first
with partial output tokens, the second with the final usage, same message and request id), then
its result; every fourth session runs a subagent whose records are inline `isSidechain`. Models:
claude-opus-4-6, claude-sonnet-4-5-20250929, claude-haiku-4-5-20251001. Text varies (words drawn
from a seeded generator), so sizes and parse work are real. 150 sessions are about 60 MB.

For the library's benchmark (issue 27) two variables make a corpus whose words vary as real text
does: VOCAB=N draws words from N made-up words (syllables from the seed) with Zipf's law
(weight 1/rank) instead of the 48 words above, and SCALE=K gives each session K times the
turns. `VOCAB=50000 SCALE=7 benches/gen_month.py HOME 500` is about 1 GB in 500 files."""
import json, random, sys, uuid, os

home = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 150
rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
WORDS = ("the a file test build error fix add remove parser config session token cost model "
         "render view feed turn call result output input cache read write index search query "
         "rust cargo clippy format branch commit merge review patch diff line column width").split()
VOCAB = int(os.environ.get("VOCAB", "0"))
SCALE = int(os.environ.get("SCALE", "1"))
if VOCAB:
    SYL = ["ka", "to", "ri", "men", "sal", "vo", "de", "qu", "ix", "lo", "pra", "sun", "ter", "ba",
           "nel", "os", "fi", "gra", "u", "wen", "zor", "hy", "ca", "mi"]
    seen = set()
    while len(seen) < VOCAB:
        seen.add("".join(rnd.choice(SYL) for _ in range(rnd.randint(1, 4))))
    WORDS = sorted(seen)
    rnd.shuffle(WORDS)
    CUM = []
    acc = 0.0
    for k in range(len(WORDS)):
        acc += 1.0 / (k + 1)
        CUM.append(acc)
    def words(n): return " ".join(rnd.choices(WORDS, cum_weights=CUM, k=n))
else:
    def words(n): return " ".join(rnd.choice(WORDS) for _ in range(n))
MODELS = ["claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"]
PROJECTS = ["/home/me/src/rawpv", "/home/me/src/site", "/home/me/work/api", "/home/me/work/infra",
            "/home/me/notes", "/home/me/src/lib-x"]
total = 0
for s in range(N):
    day = 1 + s * 30 // N
    t = (day - 1) * 86400 + rnd.randint(8 * 3600, 20 * 3600)  # seconds into April
    cwd = rnd.choice(PROJECTS)
    sid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
    d = os.path.join(home, ".claude", "projects", "".join(c if c.isalnum() else "-" for c in cwd))
    os.makedirs(d, exist_ok=True)
    model = rnd.choice(MODELS)
    parent = [None]
    lines = []
    def ts():
        global t
        t += rnd.randint(1, 40)
        day, rem = divmod(t, 86400)
        return "2026-04-%02dT%02d:%02d:%02d.%03dZ" % (day + 1, rem // 3600, rem % 3600 // 60, rem % 60, rnd.randint(0, 999))
    def rec(kind, side=False, **kw):
        u = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
        r = {"parentUuid": parent[0], "isSidechain": side, "userType": "external", "cwd": cwd,
             "sessionId": sid, "version": "2.1.40", "gitBranch": "main", "type": kind, "uuid": u,
             "timestamp": ts()}
        r.update(kw)
        parent[0] = u
        lines.append(json.dumps(r, separators=(",", ":")))
    def exchange(side, m):
        mid = "msg_%032x" % rnd.getrandbits(128)
        req = "req_%032x" % rnd.getrandbits(128)
        tid = "toolu_%024x" % rnd.getrandbits(96)
        tool = rnd.choice(["Bash", "Read", "Edit", "Grep"])
        inp = {"Bash": {"command": "cargo " + words(3)}, "Read": {"file_path": "/x/" + words(2).replace(" ", "/") + ".rs"},
               "Edit": {"file_path": "/x/a.rs", "old_string": words(8), "new_string": words(9)},
               "Grep": {"pattern": words(1), "path": "/x"}}[tool]
        usage = {"input_tokens": rnd.randint(1, 50), "cache_creation_input_tokens": rnd.randint(0, 4000),
                 "cache_read_input_tokens": rnd.randint(10000, 150000), "output_tokens": rnd.randint(1, 5),
                 "service_tier": "standard"}
        msg = {"model": m, "id": mid, "type": "message", "role": "assistant", "stop_reason": None, "usage": usage}
        rec("assistant", side, requestId=req, message=dict(msg, content=[{"type": "text", "text": words(rnd.randint(5, 40))}]))
        final = dict(usage, output_tokens=rnd.randint(20, 900))
        rec("assistant", side, requestId=req, message=dict(msg, usage=final, content=[{"type": "tool_use", "id": tid, "name": tool, "input": inp}]))
        err = rnd.random() < 1 / 12
        out = words(rnd.randint(20, 400))
        rec("user", side, message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": out, "is_error": err}]},
            toolUseResult=("Error: " + out) if err else {"stdout": out, "stderr": "", "interrupted": False})
    for turn in range(rnd.randint(6, 20) * SCALE):
        rec("user", message={"role": "user", "content": words(rnd.randint(5, 60))})
        for _ in range(rnd.randint(2, 8)):
            exchange(False, model)
        if s % 4 == 0 and turn == 1:
            keep = parent[0]
            parent[0] = None
            rec("user", True, message={"role": "user", "content": "subagent: " + words(20)})
            for _ in range(rnd.randint(2, 5)):
                exchange(True, "claude-haiku-4-5-20251001")
            parent[0] = keep
        mid = "msg_%032x" % rnd.getrandbits(128)
        rec("assistant", requestId="req_%032x" % rnd.getrandbits(128), message={"model": model, "id": mid, "type": "message", "role": "assistant",
            "stop_reason": "end_turn", "content": [{"type": "text", "text": words(rnd.randint(10, 80))}],
            "usage": {"input_tokens": 3, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 60000, "output_tokens": rnd.randint(50, 600)}})
    body = "\n".join(lines) + "\n"
    total += len(body)
    with open(os.path.join(d, sid + ".jsonl"), "w") as f:
        f.write(body)
print(f"{N} sessions, {total/1e6:.1f} MB under {home}/.claude/projects")
