"""remote.py - a bfi serve asked as a snapshot is: Client, RemoteSnapshot."""

from ._ffi import Error


# ---- a bfi serve, asked as a snapshot is ----

class Client:
    """A `bfi serve` at url (http://HOST:PORT), asked over HTTP with the
    standard library alone. Client(url).open(name) gives a RemoteSnapshot
    whose query calls answer as a local Snapshot's do, with the same types:
    lists of set names (or ordinals), and for thresholds (name, score)
    pairs, best first. Errors the server gives raise bfi.Error with its
    code ("bad_form", "not_found", ...) as name and its words as message."""

    def __init__(self, url, *, timeout=30.0):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _call(self, path, body=None, raw=False):
        import json
        import urllib.error
        import urllib.request

        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data,
                                     headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                got = r.read().decode("utf-8", "surrogateescape" if raw else "surrogatepass")
                return got if raw else json.loads(got)
        except urllib.error.HTTPError as e:
            try:
                err = json.loads(e.read().decode("utf-8", "surrogatepass"))
            except ValueError:
                err = {"code": str(e.code), "error": e.reason}
            raise RemoteError(e.code, err.get("code", ""), err.get("error", "")) from None

    def names(self):
        """The names the server serves."""
        return self._call("/v1")["snapshots"]

    def open(self, name):
        """The snapshot served as name."""
        return RemoteSnapshot(self, name)


class RemoteError(Error):
    """An error a bfi serve answered: status the HTTP status, name its code."""

    def __init__(self, status, code, message):  # pylint: disable=super-init-not-called
        self.status, self.code, self.name, self.message = status, code, code, message
        Exception.__init__(self, f"{status} {code}: {message}")


class RemoteSnapshot:
    """A snapshot served by bfi serve: query, query_text, query_sequences,
    query_expr, query_path, table and info, as Snapshot's (Client)."""

    def __init__(self, client, name):
        self.client, self.name = client, name

    @staticmethod
    def _body(kind, qs, threshold, fmt):
        """A query request's body: the queries as text, and what is asked of them."""
        body = {kind: [q.decode("utf-8", "surrogateescape") if isinstance(q, bytes) else q
                       for q in qs]}
        if threshold is not None:
            body["threshold"] = threshold
        if fmt:
            body["format"] = fmt
        return body

    def _ask(self, kind, items, threshold=None, ordinals=False):
        one = isinstance(items, (str, bytes))
        qs = [items] if one else list(items)
        body = self._body(kind, qs, threshold, "ordinals" if ordinals else None)
        res = self.client._call(f"/v1/{self.name}/query", body)["results"]
        out = [list(zip(r["matches"], r["scores"])) if "scores" in r else r["matches"]
               for r in res]
        return out[0] if one else out

    def query(self, keys, *, ordinals=False):
        """Which sets may contain each key? Formed as the snapshot's keys
        were made, as Snapshot.query does (the server's "queries")."""
        return self._ask("queries", keys, ordinals=ordinals)

    def query_text(self, text, *, threshold=None, ordinals=False):
        return self._ask("text", text, threshold, ordinals)

    def query_sequences(self, seqs, *, threshold=None, errors=None, findere=None,
                        ordinals=False):
        """As Snapshot.query_sequences: threshold= or errors= (the server's
        "errors", each read's need by the k-mer lemma), and findere=z."""
        if (threshold is None) == (errors is None):
            raise ValueError("bfi: give threshold= or errors= (one of them)")
        if isinstance(seqs, (str, bytes)):
            items, one = [seqs], True
        else:
            items, one = [x[1] if isinstance(x, tuple) else x for x in seqs], False
        items = [{"seq": s.decode() if isinstance(s, bytes) else s} for s in items]
        body = self._body("sequences", items, None, "ordinals" if ordinals else None)
        if findere is not None:
            body["findere"] = findere
        if errors is not None:
            body["errors"] = errors
        else:
            body["threshold"] = threshold
        res = self.client._call(f"/v1/{self.name}/query", body)["results"]
        out = [list(zip(r["matches"], r["scores"])) for r in res]
        return out[0] if one else out

    def query_whole(self, seqs, *, threshold, ordinals=False):
        """As Snapshot.query_whole: every sequence one query (the server's
        "whole": true)."""
        if isinstance(seqs, (str, bytes)):
            seqs = [seqs]
        items = [x[1] if isinstance(x, tuple) else x for x in seqs]
        items = [{"seq": s.decode() if isinstance(s, bytes) else s} for s in items]
        body = self._body("sequences", items, None, "ordinals" if ordinals else None)
        body["whole"] = True
        body["threshold"] = threshold
        r = self.client._call(f"/v1/{self.name}/query", body)["results"][0]
        return list(zip(r["matches"], r["scores"]))

    def query_expr(self, expr, *, ordinals=False):
        return self._ask("expr", expr, ordinals=ordinals)

    def query_path(self, path, *, ordinals=False):
        return self._ask("path", path, ordinals=ordinals)

    def table(self, queries, *, threshold=None):
        """The server's "format": "tsv" table as Snapshot.table's rows:
        (query, set, score, ratio) tuples, None for no set."""
        qs = [queries] if isinstance(queries, (str, bytes)) else list(queries)
        ids = [q[0] if isinstance(q, tuple) else q for q in qs]
        body = self._body("queries", [q[1] if isinstance(q, tuple) else q for q in qs], threshold,
                          "tsv")
        qs = body["queries"]
        text = self.client._call(f"/v1/{self.name}/query", body, raw=True)
        rows, at, seen = [], -1, set()
        for line in text.splitlines()[1:]:  # after the header
            q, name, score, ratio = line.split("\t")
            # the next query's rows, in order: another query, a set named
            # again (the same query twice), or after a query's empty row
            if at < 0 or q != qs[at] or name in seen or rows[-1][1] is None:
                at, seen = at + 1, set()
            seen.add(name)
            qid = ids[at] if at < len(ids) else q
            if isinstance(qid, bytes):
                qid = qid.decode("utf-8", "surrogateescape")
            rows.append((qid, name or None, int(score), float(ratio)))
        return rows

    def info(self):
        """What bfi inspect --json says of it."""
        return self.client._call(f"/v1/{self.name}")


