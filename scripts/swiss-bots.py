#!/usr/bin/env python3
"""A whole Swiss tournament played by CPU bots over HTTP, then checked.

Starts `uttt serve` on a fresh SQLite data folder (or --database-url and
--redis-url), registers a director and N players, creates an N-player,
R-round depth-2 Swiss, joins everyone, runs one `uttt bot --become-bot` per
player (each plays its tournament games as they are paired), starts the
tournament and waits until it finishes. Then it checks the NDJSON export:

- every round, every player still in has exactly one game or the bye;
- nobody meets the same opponent twice, nobody has two byes;
- every game has a result and a match that finished with it;
- every score equals the sum of its game results (win 1, draw 1/2, bye 1);
- every Buchholz and Sonneborn-Berger recomputes from the games (RULES.md);
- the standings are ordered by score, Buchholz, Sonneborn-Berger, rating.

Exit status 0 when all hold; 1 with the mismatches listed (the server and bot
logs are kept then).

    cargo build --release --locked
    scripts/swiss-bots.py                      # 64 players, 7 rounds
    scripts/swiss-bots.py --players 16 --rounds 4 --binary target/debug/uttt
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    def __init__(self, base):
        self.base = base

    def call(self, method, path, body=None, token=None, raw=False):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + "/api/v1" + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                text = r.read().decode()
                return r.status, (text if raw else (json.loads(text) if text else None))
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            try:
                return e.code, json.loads(text)
            except ValueError:
                return e.code, text

    def ok(self, method, path, body=None, token=None, raw=False):
        status, reply = self.call(method, path, body, token, raw)
        if status >= 300:
            raise SystemExit(f"{method} {path} -> {status}: {reply}")
        return reply


def wait_up(api, proc, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the server exited while starting")
        try:
            with urllib.request.urlopen(api.base + "/readyz", timeout=2):
                return
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    raise SystemExit("the server did not become ready")


def register(api, name, password="correct horse battery"):
    api.ok("POST", "/auth/register", {"username": name, "password": password})
    return api.ok("POST", "/auth/login", {"username": name, "password": password})


def check(lines, players, rounds):
    """The mismatches between the export and RULES.md's Swiss."""
    errors = []
    standings = [l for l in lines if l["type"] == "standing"]
    games = [l for l in lines if l["type"] == "game"]
    byes = [l for l in lines if l["type"] == "bye"]
    ids = {s["player"]["id"] for s in standings}
    if len(ids) != players:
        errors.append(f"{len(ids)} players in the standings, expected {players}")
    score = {p: 0.0 for p in ids}
    opponents = {p: [] for p in ids}  # (opponent, points scored against them)
    met = set()
    bye_count = {p: 0 for p in ids}
    for r in range(1, rounds + 1):
        seen = []
        for g in (g for g in games if g["round"] == r):
            x, o, result = g["x"]["id"], g["o"]["id"], g["result"]
            seen += [x, o]
            pair = frozenset((x, o))
            if pair in met:
                errors.append(f"round {r}: {x} and {o} meet again")
            met.add(pair)
            points = {"x": (1.0, 0.0), "o": (0.0, 1.0), "draw": (0.5, 0.5)}.get(result)
            if points is None:
                errors.append(f"round {r}: game {g['match_id']} has no result ({result})")
                continue
            score[x] += points[0]
            score[o] += points[1]
            opponents[x].append((o, points[0]))
            opponents[o].append((x, points[1]))
        for b in (b for b in byes if b["round"] == r):
            p = b["player"]["id"]
            seen.append(p)
            score[p] += 1.0
            bye_count[p] += 1
            opponents[p].append((None, 1.0))
        if sorted(seen) != sorted(set(seen)):
            errors.append(f"round {r}: someone plays twice")
        if set(seen) != ids:
            errors.append(f"round {r}: {len(ids - set(seen))} players without a game or bye")
    for p, n in bye_count.items():
        if n > 1:
            errors.append(f"{p} had {n} byes")
    for s in standings:
        p = s["player"]["id"]
        buchholz = sum(score[p] if o is None else score[o] for o, _ in opponents[p])
        # RULES.md: a bye counts as an opponent with the player's own score
        # for Buchholz; Sonneborn-Berger sums beaten opponents' scores and
        # half of drawn ones', so a bye adds nothing there.
        sb = sum(score[o] * pts for o, pts in opponents[p] if o is not None)
        for what, expected, got in [
            ("score", score[p], s["score"]),
            ("buchholz", buchholz, s["tiebreaks"]["buchholz"]),
            ("sonneborn_berger", sb, s["tiebreaks"]["sonneborn_berger"]),
        ]:
            if abs(expected - got) > 1e-9:
                errors.append(f"{s['player']['username']}: {what} {got}, recomputed {expected}")
    key = [
        (-s["score"], -s["tiebreaks"]["buchholz"], -s["tiebreaks"]["sonneborn_berger"], -s["rating"])
        for s in standings
    ]
    if key != sorted(key):
        errors.append("the standings are not in order of score, Buchholz, Sonneborn-Berger, rating")
    return errors, len(games), len(byes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="target/release/uttt")
    ap.add_argument("--players", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--level", type=int, default=1, help="the bots' CPU level")
    ap.add_argument("--database-url", help="PostgreSQL instead of a fresh SQLite file")
    ap.add_argument("--redis-url")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds for the whole tournament")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="uttt-swiss-bots-")
    port = free_port()
    env = dict(os.environ)
    env.update(
        UTTT_BIND=f"127.0.0.1:{port}",
        UTTT_DATA_DIR=work,
        UTTT_JWT_SECRET="swiss-bots-secret-0123456789abcdef0123",
        UTTT_REGISTER_LIMIT_PER_ADDRESS="100000",
        UTTT_LOGIN_LIMIT_PER_ADDRESS="100000",
        RUST_LOG=env.get("RUST_LOG", "warn"),
    )
    if args.database_url:
        env["DATABASE_URL"] = args.database_url
    if args.redis_url:
        env["REDIS_URL"] = args.redis_url
    server_log = open(os.path.join(work, "server.log"), "w")
    server = subprocess.Popen([args.binary, "serve"], env=env, stdout=server_log, stderr=subprocess.STDOUT)
    bots = []
    ok = False
    try:
        api = Api(f"http://127.0.0.1:{port}")
        wait_up(api, server)
        director = register(api, "director")
        players = [register(api, f"bot{i:03}") for i in range(args.players)]
        t = api.ok("POST", "/tournaments", {
            "name": f"{args.players} bots, {args.rounds} rounds",
            "kind": "swiss",
            "rounds": args.rounds,
            "depth": 2,
            "time_control": {"kind": "per_turn", "turn_ms": 30000},
            "round_pause_ms": 0,
            "max_players": args.players,
        }, director["access_token"])
        tid = t["id"]
        for p in players:
            api.ok("POST", f"/tournaments/{tid}/join", {}, p["access_token"])
        for i, p in enumerate(players):
            log = open(os.path.join(work, f"bot{i:03}.log"), "w")
            bot_env = dict(env, UTTT_BOT_TOKEN=p["refresh_token"], UTTT_BOT_SERVER=api.base)
            bots.append(subprocess.Popen(
                [args.binary, "bot", "--become-bot", "--level", str(args.level)],
                env=bot_env, stdout=log, stderr=subprocess.STDOUT))
        time.sleep(3)  # every bot has opened its event stream
        started = time.time()
        api.ok("POST", f"/tournaments/{tid}/start", {}, director["access_token"])
        last = None
        while True:
            t = api.ok("GET", f"/tournaments/{tid}")
            if (t["status"], t["round"]) != last:
                last = (t["status"], t["round"])
                print(f"{time.time() - started:7.1f} s  {t['status']} round {t['round']}", flush=True)
            if t["status"] in ("finished", "cancelled"):
                break
            if time.time() - started > args.timeout:
                raise SystemExit("the tournament did not finish in time")
            dead = [i for i, b in enumerate(bots) if b.poll() is not None]
            if dead:
                raise SystemExit(f"bots exited early: {dead[:10]}")
            time.sleep(1)
        elapsed = time.time() - started
        text = api.ok("GET", f"/tournaments/{tid}/export?format=ndjson", raw=True)
        lines = [json.loads(l) for l in text.splitlines() if l.strip()]
        errors, games, byes = check(lines, args.players, args.rounds)
        if t["status"] != "finished":
            errors.append(f"the tournament ended {t['status']}")
        # Every game's match finished with the result the tournament recorded.
        for g in (l for l in lines if l["type"] == "game"):
            state = api.ok("GET", f"/matches/{g['match_id']}", token=director["access_token"])
            if state["status"] != "finished" or state["mode"] != "tournament":
                errors.append(f"match {g['match_id']}: {state['status']} {state['mode']}")
        print(f"{args.players} players, {args.rounds} rounds: {games} games and {byes} byes "
              f"in {elapsed:.1f} s")
        top = [l for l in lines if l["type"] == "standing"][:3]
        for s in top:
            print(f"  {s['rank']}. {s['player']['username']} {s['score']} "
                  f"(Buchholz {s['tiebreaks']['buchholz']}, SB {s['tiebreaks']['sonneborn_berger']})")
        if errors:
            print(f"{len(errors)} mismatches:")
            for e in errors[:50]:
                print("  " + e)
            return 1
        print("standings consistent: every score, Buchholz and Sonneborn-Berger recomputed from the export")
        ok = True
        return 0
    finally:
        for b in bots:
            b.terminate()
        for b in bots:
            try:
                b.wait(timeout=10)
            except subprocess.TimeoutExpired:
                b.kill()
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"logs kept in {work}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
