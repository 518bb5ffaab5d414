"""The official Python clients against `heddle-eval serve` (make clients-check).

Usage: clients_check.py URL INDEX

The index must hold scripts/clients-check.sh's corpus: d0..d19 about covid, and "bats".
Each client (elasticsearch 9.x, opensearch-py) runs ping, info, searches (match,
multi_match, paging), count, bulk with and without an index in the path, get, index and
delete by id, and error handling; every difference from what the client expects is
printed, and the exit status is 1 if there was any.
"""

import sys

import elasticsearch
import opensearchpy
from elasticsearch import Elasticsearch
from elasticsearch import helpers as es_helpers
from opensearchpy import OpenSearch
from opensearchpy import helpers as os_helpers

URL, INDEX = sys.argv[1], sys.argv[2]
FAILURES = []


def check(client, what, got, want):
    ok = got == want
    print(f"{'ok  ' if ok else 'FAIL'} {client}: {what}" + ("" if ok else f": got {got!r}, want {want!r}"))
    if not ok:
        FAILURES.append(f"{client}: {what}")


def raised(call, kind):
    """The exception `call` raises if it is a `kind`, else a description of what happened."""
    try:
        result = call()
    except kind as e:
        return e
    except Exception as e:  # noqa: BLE001 -- the report names what was raised instead
        return f"{type(e).__name__}: {e}"
    return f"no error: {result!r}"


def ids(response):
    return [h["_id"] for h in response["hits"]["hits"]]


def run(name, client, helpers, not_found, bad_request, search, count):
    """The same checks through either client. `search` and `count` call the client's own
    search and count with a query (they differ: the 9.x client takes keyword arguments
    where opensearch-py takes a body)."""
    check(name, "ping", client.ping(), True)
    info = client.info()
    check(name, "info version.number is 9.x", str(info["version"]["number"]).split(".")[0], "9")

    r = search({"match": {"text": "bats"}}, size=3)
    check(name, "match: ids", ids(r), ["bats"])
    check(name, "match: hits.total", dict(r["hits"]["total"]), {"value": 1, "relation": "eq"})
    check(name, "match: _source", r["hits"]["hits"][0]["_source"], {"title": "Bats"})
    check(name, "match: max_score is the first score", r["hits"]["max_score"], r["hits"]["hits"][0]["_score"])
    r = search({"multi_match": {"query": "bats covid", "fields": ["title^2", "text"]}}, size=3)
    check(name, "multi_match: best first", ids(r)[:1], ["bats"])
    full = ids(search({"match": {"flat": "covid"}}, size=10))
    check(name, "paging: 10 covid hits", len(full), 10)
    page = ids(search({"match": {"flat": "covid"}}, size=3, from_=4))
    check(name, "paging: size 3 from 4", page, full[4:7])
    r = search({"match": {"flat": "covid"}}, size=2)
    check(name, "hits.total counts every match", dict(r["hits"]["total"]), {"value": 20, "relation": "eq"})

    check(name, "count: all", client.count(index=INDEX)["count"], 21)
    check(name, "count: a query", count({"match": {"text": "covid"}})["count"], 20)

    # Bulk with the index in the path (the helper's index=), refresh as the docs show it.
    done = helpers.bulk(client, [{"_id": "zebra", "_source": {"title": "Zebra", "text": "zebra stripes"}}],
                        index=INDEX, refresh=True)
    check(name, "bulk with an index", done, (1, []))
    check(name, "bulk with an index: found", ids(search({"match": {"flat": "zebra"}}, size=3)), ["zebra"])
    # Without: every action names its index.
    done = helpers.bulk(client, [
        {"_index": INDEX, "_id": "yak", "_source": {"title": "Yak", "text": "yak wool"}},
        {"_op_type": "delete", "_index": INDEX, "_id": "zebra"},
    ])
    check(name, "bulk without an index", done, (2, []))
    check(name, "bulk without an index: count", client.count(index=INDEX)["count"], 22)
    e = raised(lambda: helpers.bulk(client, [{"_index": "logs", "_id": "x", "_source": {"text": "x"}}]),
               Exception)
    check(name, "bulk to another index is refused, naming it", "logs" in str(e), True)

    # By id.
    got = client.get(index=INDEX, id="yak")
    check(name, "get: found", (got["found"], got["_source"]), (True, {"title": "Yak"}))
    e = raised(lambda: client.get(index=INDEX, id="absent"), not_found)
    check(name, "get of an absent id: not found", isinstance(e, not_found), True)
    r = client.index(index=INDEX, id="ibex", body={"title": "Ibex", "text": "ibex horns"}, refresh=True) \
        if name == "opensearch-py" else \
        client.index(index=INDEX, id="ibex", document={"title": "Ibex", "text": "ibex horns"}, refresh=True)
    check(name, "index by id", r["result"], "created")
    r = client.delete(index=INDEX, id="ibex")
    check(name, "delete by id", r["result"], "deleted")
    r = client.delete(index=INDEX, id="yak", refresh=True)
    check(name, "delete by id again", client.count(index=INDEX)["count"], 21)
    e = raised(lambda: client.delete(index=INDEX, id="yak"), not_found)
    check(name, "delete of an absent id: not found", isinstance(e, not_found), True)

    # Errors: the client's exception, with the server's reason.
    e = raised(lambda: search({"match_all": {}}, size=3), bad_request)
    check(name, "an unsupported query: bad request naming it", "match_all" in str(e), True)
    e = raised(lambda: client.count(index="nope"), not_found)
    check(name, "an unknown index: not found", isinstance(e, not_found), True)
    e = raised(lambda: search({"match": {"author": "x"}}, size=3), bad_request)
    check(name, "an unknown field: bad request naming it", "author" in str(e), True)


def main():
    es = Elasticsearch(URL)
    run(
        f"elasticsearch {elasticsearch.__versionstr__}",
        es,
        es_helpers,
        elasticsearch.NotFoundError,
        elasticsearch.BadRequestError,
        lambda query, size, from_=0: es.search(index=INDEX, query=query, size=size, from_=from_),
        lambda query: es.count(index=INDEX, query=query),
    )
    osc = OpenSearch(URL)
    run(
        "opensearch-py",
        osc,
        os_helpers,
        opensearchpy.NotFoundError,
        opensearchpy.RequestError,
        lambda query, size, from_=0: osc.search(index=INDEX, body={"query": query, "size": size, "from": from_}),
        lambda query: osc.count(index=INDEX, body={"query": query}),
    )
    if FAILURES:
        print(f"\nclients-check: {len(FAILURES)} difference(s):", *FAILURES, sep="\n  ")
        sys.exit(1)
    print("\nclients-check: both clients got what they expect")


main()
