#!/usr/bin/env python3
"""A uttt bot in plain Python 3 (standard library only) that plays random legal moves.

It shows the whole protocol of API.md, "Challenges and bots":

1. log in (POST /auth/login) and keep the session alive with the refresh token
   (POST /auth/refresh; refresh tokens work once, so refreshes take turns);
2. make sure the account is a bot (POST /me/bot, with --become-bot: for good);
3. listen on GET /me/events (server-sent events): accept or decline `challenge`,
   play every `match_found`; reconnect when the stream ends (it ends when the
   access token it was opened with expires);
4. with --ladder, hold a ticket there (POST /matchmaking/tickets) when idle;
5. play a match from its stream GET /matches/{id}/events: on each `state`
   where it is our turn, POST /matches/{id}/moves {ply, address} with an
   address picked from state["next"]["legal"].

Usage:
    UTTT_BOT_PASSWORD=... python3 examples/bot.py --server http://127.0.0.1:8080 \\
        --username mybot [--ladder ID] [--accept-challenges] [--become-bot] [--matches N]
"""

import argparse
import json
import os
import random
import sys
import threading
import time
import urllib.error
import urllib.request


def log(*parts):
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


class Api:
    """The HTTP API under /api/v1 with a session that renews itself."""

    def __init__(self, server):
        self.base = server.rstrip("/") + "/api/v1"
        self.lock = threading.Lock()
        self.access = None
        self.refresh_token = None
        self.renew_at = 0.0

    def _send(self, method, path, body=None, token=None, timeout=30):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                raw = res.read()
                return res.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                return err.code, json.loads(raw)
            except ValueError:
                return err.code, {"detail": raw.decode(errors="replace")}

    def _take(self, body):
        self.access = body["access_token"]
        self.refresh_token = body["refresh_token"]
        # Renew a quarter of the lifetime (at most a minute) before it ends.
        ttl = body["expires_in"]
        self.renew_at = time.monotonic() + ttl - min(ttl / 4, 60)

    def login(self, username, password):
        status, body = self._send("POST", "/auth/login", {"username": username, "password": password})
        if status != 200:
            sys.exit(f"login failed: {status} {body}")
        self._take(body)
        return body["player"]

    def token(self, rejected=None):
        """The access token; renewed first when due or when the server refused `rejected`."""
        with self.lock:
            if time.monotonic() >= self.renew_at or (rejected and rejected == self.access):
                status, body = self._send("POST", "/auth/refresh", {"refresh_token": self.refresh_token})
                if status != 200:
                    log("the session cannot be renewed:", status, body)
                    os._exit(1)
                self._take(body)
            return self.access

    def call(self, method, path, body=None):
        """Answers (status, JSON body); a refused token is renewed and the call sent again."""
        token = self.token()
        status, reply = self._send(method, path, body, token)
        if status == 401:
            status, reply = self._send(method, path, body, self.token(rejected=token))
        return status, reply

    def events(self, path):
        """Opens a server-sent event stream; answers an iterator of (event, data) until it ends."""
        token = self.token()
        req = urllib.request.Request(self.base + path, headers={
            "Accept": "text/event-stream", "Authorization": "Bearer " + token})
        # The server writes at least every 15 s: a longer silence is a lost connection.
        return read_events(urllib.request.urlopen(req, timeout=45))


def read_events(res):
    """The events of an open `text/event-stream` response."""
    with res:
        event, data = "message", []
        for raw in res:
            line = raw.decode().rstrip("\r\n")
            if not line:
                if data:
                    yield event, "\n".join(data)
                event, data = "message", []
            elif line.startswith(":"):
                continue
            else:
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "event":
                    event = value
                elif field == "data":
                    data.append(value)


class Bot:
    def __init__(self, api, me, args):
        self.api = api
        self.me = me
        self.args = args
        self.lock = threading.Lock()
        self.playing = set()
        self.finished = set()
        self.done = threading.Event()

    def run(self):
        threading.Thread(target=self.listen, daemon=True).start()
        self.done.wait()

    def listen(self):
        while True:
            try:
                stream = self.api.events("/me/events")
                self.catch_up()
                for event, data in stream:
                    self.on_event(event, json.loads(data))
                log("event stream ended; reconnecting")
            except (OSError, ValueError) as err:
                log("event stream lost:", err)
            time.sleep(1)

    def catch_up(self):
        """What the events said while we were away: matches, challenges, the queue."""
        _, page = self.api.call("GET", "/me/matches?status=active&limit=100")
        for item in (page or {}).get("items", []):
            self.play(item["id"])
        _, mine = self.api.call("GET", "/me/challenges")
        for challenge in (mine or {}).get("incoming", []):
            self.answer(challenge)
        self.queue()

    def on_event(self, event, data):
        if event == "challenge":
            self.answer(data)
        elif event in ("match_found", "tournament_pairing"):
            self.play(data["match_id"])
        elif event == "resync":
            self.catch_up()
        elif event == "session_revoked":
            log("the session was revoked")
            os._exit(1)

    def answer(self, challenge):
        if challenge["challenged"]["id"] != self.me["id"] or challenge.get("status", "pending") != "pending":
            return
        who = challenge["challenger"]["username"]
        if self.args.accept_challenges:
            status, body = self.api.call("POST", f"/challenges/{challenge['id']}/accept", {})
            log("accepted the challenge of", who, status)
            if status == 200:
                self.play(body["match_id"])
        else:
            self.api.call("POST", f"/challenges/{challenge['id']}/decline", {"reason": "not now"})
            log("declined the challenge of", who)

    def queue(self):
        with self.lock:
            idle = not self.playing and not self.stopping()
        if not (self.args.ladder and idle):
            return
        status, body = self.api.call("POST", "/matchmaking/tickets", {"ladder": self.args.ladder})
        if status == 201:
            log("queued on", self.args.ladder)
        elif status in (403, 404, 422):
            log("cannot queue:", status, body)
            os._exit(1)
        # 409 already_queued or in_active_match: nothing to do.

    def stopping(self):
        return self.args.matches and len(self.finished) >= self.args.matches

    def play(self, match_id):
        with self.lock:
            if match_id in self.playing or match_id in self.finished:
                return
            self.playing.add(match_id)
        threading.Thread(target=self.play_match, args=(match_id,), daemon=True).start()

    def play_match(self, match_id):
        tried = None
        while True:
            try:
                for event, data in self.api.events(f"/matches/{match_id}/events"):
                    if event != "state":
                        continue
                    state = json.loads(data)
                    if state["status"] == "finished":
                        return self.finished_match(state)
                    turn = state["turn"]
                    if turn and state["players"][turn]["id"] == self.me["id"] and tried != state["ply"]:
                        tried = state["ply"]
                        address = random.choice(state["next"]["legal"])
                        status, body = self.api.call(
                            "POST", f"/matches/{match_id}/moves", {"ply": state["ply"], "address": address})
                        if status != 200:
                            log("move refused:", status, body.get("code") if body else None)
            except (OSError, ValueError) as err:
                log("match stream lost:", err)
            time.sleep(0.5)

    def finished_match(self, state):
        winner = state["result"]["winner"]
        seat = "x" if state["players"]["x"]["id"] == self.me["id"] else "o"
        outcome = "draw" if winner is None else "won" if winner == seat else "lost"
        log("match", state["id"], "finished:", outcome, state["result"]["reason"])
        with self.lock:
            self.playing.discard(state["id"])
            self.finished.add(state["id"])
        if self.stopping():
            self.done.set()
        else:
            self.queue()


def main():
    parser = argparse.ArgumentParser(description="A uttt bot that plays random legal moves.")
    parser.add_argument("--server", required=True, help="e.g. http://127.0.0.1:8080")
    parser.add_argument("--username", required=True)
    parser.add_argument("--ladder", help="queue on this ladder (it must accept bots) when idle")
    parser.add_argument("--accept-challenges", action="store_true")
    parser.add_argument("--become-bot", action="store_true", help="turn the account into a bot, for good")
    parser.add_argument("--matches", type=int, default=0, help="stop after this many matches (0: never)")
    args = parser.parse_args()
    password = os.environ.get("UTTT_BOT_PASSWORD")
    if not password:
        sys.exit("set UTTT_BOT_PASSWORD")

    api = Api(args.server)
    me = api.login(args.username, password)
    if not me.get("bot"):
        if not args.become_bot:
            sys.exit(f"{me['username']} is not a bot account (pass --become-bot to turn it into one, for good)")
        status, me = api.call("POST", "/me/bot", {})
        if status != 200:
            sys.exit(f"cannot become a bot: {status} {me}")
    log("playing as", me["username"])
    Bot(api, me, args).run()


if __name__ == "__main__":
    main()
