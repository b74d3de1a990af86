"""Memories: both stores merged, filtered and paged; one memory in full."""

from __future__ import annotations

from flask import Blueprint, request

from ...web import page as page_
from ...web import page_route, status_of
from ..conversations import provenance_of
from . import adding, bulk, curate
from .page import detail_context, list_context, list_json, write_fields

bp = Blueprint("memories", __name__)
# Curating one memory is part of this screen (curate.py holds the handlers).
bp.add_url_rule("/memories/<store>/<memory_id>/<action>", "curate", curate.act, methods=["POST"])
bp.add_url_rule("/memories/<store>/<memory_id>/effect", "edit_effect", curate.effect, methods=["GET"])
# Adding one by hand (adding.py): the form and its plan, and the save.
page_route(bp, "/memories/new")(adding.new)
bp.add_url_rule("/memories/new", "add", adding.add, methods=["POST"])
bp.add_url_rule("/memories/new/plan", "plan_new", adding.plan, methods=["POST"])
# Bulk actions from the list (bulk.py): the dry run and Apply, each with a .json twin.
for _tail in ("", ".json"):  # the .json twin answers JSON (web.wants_json reads the path)
    bp.add_url_rule("/memories/bulk/plan" + _tail, "bulk_plan", bulk.review, methods=["POST"])
    bp.add_url_rule("/memories/bulk" + _tail, "bulk", bulk.apply, methods=["POST"])


@page_route(bp, "/memories")
def index(fmt: str):
    return page_(
        fmt,
        "memories/index.html",
        "memories/_list.html",
        to_json=list_json,
        **list_context(request.args, choices=fmt != "json"),
    )


@page_route(bp, "/memories/<store>/<memory_id>")
def detail(store: str, memory_id: str, fmt: str):
    ctx = detail_context(store, memory_id, fmt)
    ctx["provenance"] = provenance_of(ctx["memory"])
    return page_(
        fmt,
        "memories/detail.html",
        "memories/_page.html",
        to_json=lambda ctx: {
            "memory": ctx["memory"],
            "events": ctx["events"],
            "reach": ctx["reach"],
            "provenance": ctx["provenance"],
            "write": write_fields(ctx["memory"], status_of(store)),
        },
        **ctx,
    )
