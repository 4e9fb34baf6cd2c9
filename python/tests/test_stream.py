"""neardup.Stream answers as the batch CLI (`neardup clusters --rule leader`)
and the HTTP service (`neardup serve`) answer on the same documents, keeps
its window, texts and durable state."""

import json
import re
import subprocess
import urllib.error
import urllib.request

import pytest

import neardup
from conftest import run_cli


def printed(answer):
    """An answer as `neardup serve` prints it (similarity with %.6g)."""
    return dict(answer, similarity=float(f"{answer['similarity']:.6g}"))


@pytest.mark.parametrize("args,kwargs", [
    (["--threshold", "0.7"], dict(threshold=0.7)),
    (["--method", "simhash", "--max-distance", "6"], dict(method="simhash", max_distance=6)),
])
def test_answers_equal_the_cli_leader_rule(cli, jsonl_file, planted_corpus, args, kwargs):
    rows = run_cli(cli, ["clusters", "--rule", "leader", *args, str(jsonl_file)])
    order = {doc_id: i for i, (doc_id, _) in enumerate(planted_corpus)}
    leader_of = {}
    for row in rows:
        leader = min(row["ids"], key=order.__getitem__)
        for doc_id in row["ids"]:
            if doc_id != leader:
                leader_of[doc_id] = leader
    stream = neardup.Stream(**kwargs)
    answers = stream.add_many(planted_corpus, times=[0] * len(planted_corpus))
    assert len(leader_of) > 10  # the planted edits are found
    assert {a["id"]: a["of"] for a in answers if a["of"] is not None} == leader_of
    assert all(a["status"] == ("near_duplicate" if a["id"] in leader_of else "new")
               for a in answers)
    # Stored answers, and a check that stores nothing.
    assert [stream.get(doc_id) for doc_id, _ in planted_corpus] == answers
    assert stream.check(planted_corpus[0][1], id="q", time=0)["of"] == planted_corpus[0][0]
    assert "q" not in stream and len(stream) == len(planted_corpus)


def test_answers_equal_the_http_service(cli, tmp_path, planted_corpus):
    server = subprocess.Popen(
        [cli, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"),
         "--no-fsync"], stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in server.stderr:
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if found:
                port = int(found.group(1))
                break
        assert port, "the server did not start"
        base = f"http://127.0.0.1:{port}"

        def call(method, path, body):
            request = urllib.request.Request(base + path, data=body.encode(), method=method,
                                             headers={"Content-Type": "application/x-ndjson"})
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.read().decode()

        # /readyz: the data directory is empty, so recovery is immediate.
        for _ in range(200):
            try:
                urllib.request.urlopen(base + "/readyz", timeout=5)
                break
            except OSError:
                pass
        config = {"threshold": 0.7, "max_documents": 80, "keep_texts": True}
        call("PUT", "/v1/streams/s", json.dumps(config))
        lines = "".join(json.dumps({"id": i, "text": t, "time": n}) + "\n"
                        for n, (i, t) in enumerate(planted_corpus))
        served = [json.loads(line) for line in call("POST", "/v1/streams/s/documents",
                                                    lines).splitlines()]
        listed = json.loads(call("GET", "/v1/streams/s/near_duplicates?limit=1000&texts=true"
                                 "&passages=true&order=oldest", ""))
        near = [a["id"] for a in served if a["status"] == "near_duplicate"]
        entries = {i: json.loads(call("GET", f"/v1/streams/s/documents/{i}?passages=true", ""))
                   for i in near[-3:]}
        kept = next(a["id"] for a in served[-80:] if a["status"] == "new")
        entries[kept] = json.loads(call("GET", f"/v1/streams/s/documents/{kept}?texts=true", ""))
        # Pages of 7 by the server's cursors, newest first; a time range with
        # an id search (the route's from / to / q).
        served_pages, cursor = [], ""
        while True:
            page = json.loads(call("GET", f"/v1/streams/s/near_duplicates?limit=7"
                                   f"&cursor={cursor}", ""))
            served_pages.append(page)
            if page["next_cursor"] is None:
                break
            cursor = page["next_cursor"]
        filtered = json.loads(call("GET", "/v1/streams/s/near_duplicates?order=oldest&from=60"
                                   "&to=100&q=EDIT-1", ""))
        try:
            call("GET", "/v1/streams/s/documents/absent", "")
            absent_status = 200
        except urllib.error.HTTPError as e:
            absent_status = e.code
    finally:
        server.terminate()
        server.wait(timeout=30)
    stream = neardup.Stream(**config)
    answers = stream.add_many(planted_corpus, times=list(range(len(planted_corpus))))
    assert [printed(a) for a in answers] == served
    # list() and entry() give the JSON of the HTTP routes.
    page = stream.list(limit=1000, texts=True, passages=True, order="oldest")
    assert dict(page, answers=[printed(e) for e in page["answers"]]) == listed
    assert any(e["passages"] for e in listed["answers"])
    for doc_id, served_entry in entries.items():
        detail = dict(texts=True) if doc_id == kept else dict(passages=True)
        assert printed(stream.entry(doc_id, **detail)) == served_entry
    assert absent_status == 404 and stream.entry("absent") is None
    pages, cursor = [], None
    while True:
        page = stream.list(limit=7, cursor=cursor)
        pages.append(dict(page, answers=[printed(e) for e in page["answers"]]))
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == served_pages and len(pages) > 2
    page = stream.list(order="oldest", from_time=60, to_time=100, search="EDIT-1")
    assert dict(page, answers=[printed(e) for e in page["answers"]]) == filtered
    assert filtered["answers"]
    assert sum(a["status"] == "near_duplicate" for a in answers) > 10
    # The window (max_documents 80) holds the last 80 documents, with texts.
    assert len(stream) == 80 and stream.stats()["evicted"] == len(planted_corpus) - 80
    assert stream.get(planted_corpus[0][0]) is None
    last_id, last_text = planted_corpus[-1]
    assert stream.text(last_id) == last_text
    with pytest.raises(neardup.StorageError):
        stream.text(planted_corpus[0][0])


def test_a_durable_stream_reopens_with_its_answers(tmp_path, planted_corpus):
    path = str(tmp_path / "stream")
    stream = neardup.Stream(path, threshold=0.7, window_seconds=100, keep_texts=True)
    answers = stream.add_many(planted_corpus[:50], times=list(range(50)))
    stream.remove(planted_corpus[10][0])
    stats = stream.stats()
    del stream
    reopened = neardup.Stream.open(path)
    assert reopened.config == {"method": "minhash", "threshold": 0.7, "max_distance": 3,
                               "preset": "default", "window_seconds": 100, "max_documents": 0,
                               "keep_texts": True}
    assert reopened.stats()["documents"] == stats["documents"] == 49
    expected = [a for i, a in enumerate(answers) if i != 10]
    assert [reopened.get(a["id"]) for a in expected] == expected
    assert reopened.text(planted_corpus[3][0]) == planted_corpus[3][1]
    # A retry returns the stored answer; the window moves with time.
    assert reopened.add(planted_corpus[5][0], "other text", time=0) == answers[5]
    reopened.add("late", "a late text", time=200)
    assert len(reopened) == 1 and reopened.stats()["evicted"] == 49
    # Another config in the same directory is refused.
    del reopened
    with pytest.raises(neardup.InvalidArgumentError, match="another config"):
        neardup.Stream(path, threshold=0.9)


def test_bad_arguments_raise(tmp_path):
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.Stream(threshold=1.5)
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.Stream(method="cosine")
    stream = neardup.Stream()
    with pytest.raises(neardup.InvalidArgumentError):
        stream.add("", "empty id")
    with pytest.raises(TypeError):
        stream.add(3, "not a str id")
    with pytest.raises(ValueError):
        stream.add_many([("a", "x")], times=[1, 2])
    with pytest.raises(neardup.InvalidArgumentError, match="keep_texts"):
        stream.text("a")
    with pytest.raises(neardup.StorageError):
        stream.remove("absent")
    with pytest.raises(neardup.StorageError):
        neardup.Stream.open(str(tmp_path / "none"))


def mixed_documents(planted_corpus):
    """300 (id, text, time): the corpus twice and a half, ids repeated with
    other texts, times going back and forth."""
    docs = []
    for n in range(300):
        doc_id, text = planted_corpus[n % len(planted_corpus)]
        if n >= len(planted_corpus):
            doc_id = doc_id if n % 3 == 0 else f"{doc_id}-{n}"
            text = text if n % 2 == 0 else text + " extra words"
        docs.append((doc_id, text, n * 2 - (n % 7) * 3))
    return docs


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(window_seconds=150, max_documents=90),
    dict(method="simhash", max_distance=6, window_seconds=200),
])
def test_add_many_answers_as_adding_one_by_one(tmp_path, planted_corpus, kwargs):
    docs = mixed_documents(planted_corpus)
    one = neardup.Stream(**kwargs)
    expected = [one.add(i, t, time=at) for i, t, at in docs]
    assert sum(a["status"] == "near_duplicate" for a in expected) > 20
    # In memory and durable (over 128 documents: several log writes).
    for path in (None, str(tmp_path / "stream")):
        many = neardup.Stream(path, sync=False, **kwargs)
        answers = many.add_many([(i, t) for i, t, _ in docs[:7]], times=[a for *_, a in docs[:7]])
        answers += many.add_many([(i, t) for i, t, _ in docs[7:]], times=[a for *_, a in docs[7:]])
        assert answers == expected
        counts = ("documents", "kept", "added", "evicted", "oldest_time", "newest_time")
        assert {k: many.stats()[k] for k in counts} == {k: one.stats()[k] for k in counts}
        assert [many.get(i) for i, _, _ in docs] == [one.get(i) for i, _, _ in docs]
        page = dict(limit=10000, texts=False)
        assert many.list(**page) == one.list(**page)


def test_add_many_stops_at_a_bad_document(tmp_path, planted_corpus):
    stream = neardup.Stream(str(tmp_path / "stream"))
    docs = planted_corpus[:3] + [("", "no id")] + planted_corpus[3:5]
    with pytest.raises(neardup.InvalidArgumentError, match='document "".*id must not be empty'):
        stream.add_many(docs, times=[1] * len(docs))
    del stream
    reopened = neardup.Stream.open(str(tmp_path / "stream"))
    assert len(reopened) == 3 and planted_corpus[3][0] not in reopened


def test_list_pages_filters_and_entries(planted_corpus):
    stream = neardup.Stream(threshold=0.7, keep_texts=True)
    answers = stream.add_many(planted_corpus, times=list(range(len(planted_corpus))))
    near = [a for a in answers if a["status"] == "near_duplicate"]
    assert len(near) > 10
    whole = stream.list(limit=1000)
    assert whole["next_cursor"] is None and whole["scanned"] == len(near)
    # Newest first by default; each entry is the answer and its kept one's time.
    assert [e["id"] for e in whole["answers"]] == [a["id"] for a in reversed(near)]
    time_of = {a["id"]: a["time"] for a in answers}
    for entry in whole["answers"]:
        assert entry == dict(stream.get(entry["id"]), of_time=time_of[entry["of"]])
    # Pages of 4 by cursor make up the whole list, oldest first.
    paged, cursor = [], None
    while True:
        page = stream.list(limit=4, order="oldest", cursor=cursor)
        paged += page["answers"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert paged == list(reversed(whole["answers"]))
    # A time range and a search.
    ranged = stream.list(from_time=30, to_time=60, limit=1000)["answers"]
    assert ranged == [e for e in whole["answers"] if 30 <= e["time"] <= 60]
    needle = near[0]["of"].upper()
    found = stream.list(search=needle, limit=1000)["answers"]
    assert found and all(needle.lower() in (e["id"] + " " + e["of"]).lower() for e in found)
    # entry(): texts and passages; a kept document has neither of_time nor of_text.
    entry = stream.entry(near[0]["id"], passages=True)
    assert entry["text"] == dict(planted_corpus)[near[0]["id"]]
    assert entry["of_text"] == dict(planted_corpus)[near[0]["of"]]
    assert entry["passages"]
    for passage in entry["passages"]:  # byte ranges inside the two (ASCII) texts
        assert 0 <= passage["query"][0] < passage["query"][1] <= len(entry["text"])
        assert 0 <= passage["match"][0] < passage["match"][1] <= len(entry["of_text"])
    kept = next(a for a in answers if a["status"] == "new")
    assert stream.entry(kept["id"], texts=True) == dict(kept, text=dict(planted_corpus)[kept["id"]])
    assert stream.entry("absent") is None
    with pytest.raises(neardup.InvalidArgumentError):
        stream.list(limit=0)
    with pytest.raises(neardup.InvalidArgumentError):
        stream.list(cursor="not a cursor")
    with pytest.raises(ValueError):
        stream.list(order="sideways")
    with pytest.raises(neardup.InvalidArgumentError, match="keep_texts"):
        neardup.Stream().entry("a", texts=True)
