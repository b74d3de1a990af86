"""The result of an action travels to the page it redirects to in the session cookie (a flash).

A client that never follows the 303s (a script, a form posted again and again) piled every
result into that cookie; past 4,096 bytes a browser drops the cookie without a word, and with it
the session and the message.  The cookie keeps only the newest few results now, each cut short.
"""

from __future__ import annotations

import json
import secrets

from bs4 import BeautifulSoup

COOKIE_MOST = 4096  # what browsers keep of one cookie
EARLIER = 470  # deletes whose 303 went unfollowed: the cookie they left was about 4,050 bytes


def test_many_actions_without_following_the_redirect_keep_the_cookie_and_the_newest_result(agent):
    memories = [agent.save(f"fact {i}", f"Fact number {i}.", scope="project") for i in range(20)]
    client = agent.app().test_client()
    # What EARLIER deletes left in the session when each 303 went unfollowed (as many real
    # posts take seconds, so they are written as they were left); the next ones go past 4 KB.
    with client.session_transaction() as said:
        said["_flashes"] = [
            (f"/memories/project/{secrets.token_hex(4)}", json.dumps({"done": "deleted", "shown": None}))
            for _ in range(EARLIER)
        ]
    for memory in memories:
        r = client.post(f"/memories/project/{memory.id}/delete", data={"updated_at": memory.updated_at})
        assert r.status_code == 303
        cookie = r.headers["Set-Cookie"]
        assert len(cookie.encode()) < COOKIE_MOST, len(cookie)
    page = BeautifulSoup(client.get(r.headers["Location"]).get_data(as_text=True), "html.parser")
    assert page.select_one("[data-done]")["data-done"] == "deleted"
    # Said once: a reload says nothing again.
    again = BeautifulSoup(client.get(r.headers["Location"]).get_data(as_text=True), "html.parser")
    assert again.select_one("[data-done]") is None
