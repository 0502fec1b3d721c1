/// The one page of `countries web`: HTML, CSS and JavaScript in one document built into the
/// binary (nothing fetched from elsewhere).
///
/// The page follows `/events` (Server-Sent Events; see ``WebPageModel``) and re-renders only
/// the row a `change` names. Each row is a real table row with `data-index`, `data-name` and
/// `data-visited` and a switch (`role="switch"`); skeleton rows (shown whenever the state is not
/// live) carry no name. A click on a switch, or Space/Enter on it, posts `/toggle?name=N` (the
/// name the user saw, never a position); the answer's text goes to the status line. The table
/// is one Tab stop, arrow keys move inside it, and a filter box narrows the rows. A stream the
/// browser gave up on (any answer but 200) is retried with a backoff, and the page says why.
/// The access token travels in an `HttpOnly` cookie, out of the script's reach.
public enum WebPageAssets {
    /// The page as served: with the change token every toggle must carry, and `nonce` on its one
    /// style and one script, the only ones its `Content-Security-Policy` lets run
    /// (``contentSecurityPolicy(nonce:)``).
    public static func page(changeToken: String, nonce: String) -> String {
        page.replacingOccurrences(
            of: "<meta charset=\"utf-8\">",
            with: "<meta charset=\"utf-8\">\n<meta name=\"countries-change\" content=\"\(changeToken)\">"
        )
        .replacingOccurrences(of: "<style>", with: "<style nonce=\"\(nonce)\">")
        .replacingOccurrences(of: "<script>", with: "<script nonce=\"\(nonce)\">")
    }

    /// Nothing but the page itself: its own style and script (by nonce), its own `/events` and
    /// `/toggle`, no frame around it, no form or base elsewhere.
    public static func contentSecurityPolicy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// The page without its token and nonce.
    public static let page = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>countries</title>
        <style>
        :root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1b1b; --muted: #5f5f5f; --line: #d8d8d8;
          --visited: #0a6b2b; --stale: #8a4f00; --focus: #1a5fd1; --track: #b8b8b8; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #151515; --fg: #e8e8e8; --muted: #a8a8a8; --line: #333333; --visited: #5fd38a;
            --stale: #f0b45a; --focus: #7fb0ff; --track: #555555; }
        }
        body { background: var(--bg); color: var(--fg); font: 15px/1.4 system-ui, sans-serif; margin: 0; }
        header { position: sticky; top: 0; background: var(--bg); border-bottom: 1px solid var(--line);
          padding: .8rem 1.5rem .5rem; z-index: 1; }
        main { padding: .5rem 1.5rem 1.5rem; }
        h1 { font-size: 1.3rem; margin: 0 0 .3rem; }
        header p { margin: .2rem 0; }
        #state { font-weight: 600; }
        #state.stale { color: var(--stale); }
        #summary { color: var(--muted); }
        #status { min-height: 1.4em; color: var(--muted); }
        label[for="filter"] { margin-right: .4rem; }
        #filter { font: inherit; padding: .15rem .4rem; max-width: 60vw; }
        table { border-collapse: collapse; width: 100%; max-width: 48rem; table-layout: fixed; }
        th, td { text-align: left; padding: .25rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th.index, td.index { width: 4rem; color: var(--muted); text-align: right; }
        th.mark, td.mark { width: 7rem; }
        td.name { overflow-wrap: anywhere; word-break: break-word; }
        button.country { all: unset; cursor: pointer; display: flex; gap: .6rem; align-items: flex-start; width: 100%; }
        button.country:hover .label { text-decoration: underline; }
        button.country:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
        .switch { flex: none; width: 1.9rem; height: 1rem; border-radius: .5rem; background: var(--track);
          position: relative; margin-top: .15rem; }
        .switch::after { content: ""; position: absolute; top: .1rem; left: .1rem; width: .8rem; height: .8rem;
          border-radius: 50%; background: var(--bg); }
        button[aria-checked="true"] .switch { background: var(--visited); }
        button[aria-checked="true"] .switch::after { left: 1rem; }
        tr[data-visited="true"] td.mark { color: var(--visited); }
        tr.skeleton td { color: var(--muted); }
        tr.skeleton span { display: inline-block; width: 8rem; height: .8em; background: var(--line); border-radius: 3px; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
        </style>
        </head>
        <body>
        <header>
        <h1>Countries</h1>
        <p>State: <span id="state" class="stale" role="status">stale: connecting to the web process</span>
        <span id="summary"></span></p>
        <p><label for="filter">Filter</label><input id="filter" type="search"
          placeholder="name contains…"> <span id="shown"></span></p>
        <p id="status" aria-live="polite"></p>
        </header>
        <main>
        <table>
        <caption class="visually-hidden">Countries; Tab into the table, move with the arrow keys, press Space or Enter to toggle visited</caption>
        <thead><tr><th scope="col" class="index">#</th><th scope="col">Country</th><th scope="col" class="mark">Visited</th></tr></thead>
        <tbody id="rows"></tbody>
        </table>
        </main>
        <script>
        "use strict";
        const changeToken = (document.querySelector('meta[name="countries-change"]') || {}).content || "";
        const body = document.getElementById("rows");
        const stateLine = document.getElementById("state");
        const summaryLine = document.getElementById("summary");
        const statusLine = document.getElementById("status");
        const filterBox = document.getElementById("filter");
        const shownLine = document.getElementById("shown");
        let rows = [];
        let live = false;
        let seq = null;
        let updatedAt = null;
        // The row the table's one Tab stop is on, by index; focus returns there after stale.
        let activeIndex = 0;
        let tableHadFocus = false;

        function matches(row) {
          const wanted = filterBox.value.trim().toLowerCase();
          return !wanted || !row || row.name.toLowerCase().includes(wanted);
        }

        function rowElement(index) {
          const tr = document.createElement("tr");
          tr.dataset.index = String(index);
          const row = rows[index];
          const cells = [document.createElement("td"), document.createElement("td"), document.createElement("td")];
          cells[0].className = "index";
          cells[0].textContent = String(index);
          cells[1].className = "name";
          cells[2].className = "mark";
          if (live && row) {
            tr.dataset.name = row.name;
            tr.dataset.visited = row.visited ? "true" : "false";
            const button = document.createElement("button");
            button.className = "country";
            button.type = "button";
            button.setAttribute("role", "switch");
            button.setAttribute("aria-checked", row.visited ? "true" : "false");
            button.tabIndex = index === activeIndex ? 0 : -1;
            const track = document.createElement("span");
            track.className = "switch";
            track.setAttribute("aria-hidden", "true");
            const label = document.createElement("span");
            label.className = "label";
            label.textContent = row.name;
            button.append(track, label);
            button.addEventListener("click", () => toggle(index, row.name));
            button.addEventListener("focus", () => setActive(index));
            cells[1].appendChild(button);
            cells[2].textContent = row.visited ? "\\u2713 visited" : "";
            if (!matches(row)) tr.hidden = true;
          } else {
            tr.className = "skeleton";
            tr.setAttribute("aria-hidden", "true");
            cells[1].appendChild(document.createElement("span"));
          }
          cells.forEach((cell) => tr.appendChild(cell));
          return tr;
        }

        function setActive(index) {
          if (index === activeIndex) return;
          const old = body.children[activeIndex] && body.children[activeIndex].querySelector("button");
          if (old) old.tabIndex = -1;
          activeIndex = index;
          const fresh = body.children[index] && body.children[index].querySelector("button");
          if (fresh) fresh.tabIndex = 0;
        }

        function renderAll() {
          const hadFocus = body.contains(document.activeElement) || tableHadFocus;
          if (activeIndex >= rows.length) activeIndex = Math.max(0, rows.length - 1);
          body.replaceChildren(...rows.map((_, index) => rowElement(index)));
          if (hadFocus && live) { focusRow(activeIndex); tableHadFocus = false; }
          summarize();
        }

        function renderRow(index) {
          const old = body.children[index];
          if (!old) { renderAll(); return; }
          const hadFocus = old.contains(document.activeElement);
          body.replaceChild(rowElement(index), old);
          if (hadFocus) focusRow(index);
          summarize();
        }

        function focusRow(index) {
          const button = body.children[index] && body.children[index].querySelector("button");
          if (button) { setActive(index); button.focus(); }
        }

        function visibleNeighbour(index, step) {
          for (let i = index + step; i >= 0 && i < rows.length; i += step) {
            if (!body.children[i].hidden) return i;
          }
          return index;
        }

        function ago(milliseconds) {
          const seconds = Math.max(0, Math.round(milliseconds / 1000));
          if (seconds < 60) return seconds + " s ago";
          if (seconds < 3600) return Math.floor(seconds / 60) + " min ago";
          return Math.floor(seconds / 3600) + " h ago";
        }

        function summarize() {
          if (seq === null) { summaryLine.textContent = ""; shownLine.textContent = ""; return; }
          const visited = rows.filter((row) => row && row.visited).length;
          const age = updatedAt === null ? "" : " \\u00b7 updated " + ago(Date.now() - updatedAt);
          summaryLine.textContent = "\\u00b7 " + visited + " of " + rows.length + " visited \\u00b7 seq " + seq + age;
          const wanted = filterBox.value.trim();
          shownLine.textContent = wanted ? rows.filter(matches).length + " shown" : "";
        }
        setInterval(summarize, 1000);

        function setState(isLive, line) {
          const changed = isLive !== live;
          if (changed && !isLive) tableHadFocus = body.contains(document.activeElement);
          live = isLive;
          stateLine.textContent = line;
          stateLine.className = live ? "" : "stale";
          if (changed) renderAll();
        }

        async function toggle(index, name) {
          try {
            const answer = await fetch("/toggle?name=" + encodeURIComponent(name),
              { method: "POST", headers: { "X-Countries-Change": changeToken } });
            const type = answer.headers.get("Content-Type") || "";
            if (type.startsWith("application/json")) {
              statusLine.textContent = (await answer.json()).status;
            } else if (answer.status === 401) {
              statusLine.textContent = "not toggled: the web process answered 401; open its address with ?token=... again";
            } else {
              // Not the web process's answer to the toggle: it may have been sent on, and made.
              statusLine.textContent = name + ": no answer to the toggle (the web process answered " +
                answer.status + "); it may or may not have been made: the table shows the list";
            }
          } catch (error) {
            statusLine.textContent = name + ": no answer to the toggle (" + error.message +
              "); it may or may not have been made: the table shows the list";
          }
        }

        body.addEventListener("keydown", (event) => {
          const tr = event.target.closest("tr");
          if (!tr) return;
          const index = Number(tr.dataset.index);
          let next = null;
          if (event.key === "ArrowDown") next = visibleNeighbour(index, 1);
          if (event.key === "ArrowUp") next = visibleNeighbour(index, -1);
          if (event.key === "Home") next = visibleNeighbour(-1, 1);
          if (event.key === "End") next = visibleNeighbour(rows.length, -1);
          if (next !== null) { focusRow(next); event.preventDefault(); }
        });

        filterBox.addEventListener("input", () => {
          for (const tr of body.children) {
            const row = rows[Number(tr.dataset.index)];
            tr.hidden = live && !matches(row);
          }
          if (body.children[activeIndex] && body.children[activeIndex].hidden) {
            const first = [...body.children].find((tr) => !tr.hidden);
            if (first) setActive(Number(first.dataset.index));
          }
          summarize();
        });

        // The rows' store: seqs mean something only within one store, so a stream that
        // resumed by Last-Event-ID onto another store (the web process restarted while the
        // service changed stores) is replaced by a fresh one, which starts with a snapshot.
        let rowsStore = null;
        let source = null;
        let retryDelay = 1000;
        function listen() {
          source = new EventSource("/events");
          source.addEventListener("open", () => { retryDelay = 1000; });
          source.addEventListener("snapshot", (event) => {
            const snapshot = JSON.parse(event.data);
            rows = snapshot.countries;
            rowsStore = snapshot.store || null;
            seq = snapshot.seq;
            updatedAt = Date.now();
            renderAll();
          });
          source.addEventListener("change", (event) => {
            const change = JSON.parse(event.data);
            rows[change.index] = { index: change.index, name: change.name, visited: change.visited };
            seq = change.seq;
            updatedAt = Date.now();
            renderRow(change.index);
          });
          source.addEventListener("state", (event) => {
            const state = JSON.parse(event.data);
            if (state.store && rowsStore && state.store !== rowsStore) {
              setState(false, "stale: the service runs on another store; taking a fresh list");
              source.close();
              listen();
              return;
            }
            if (state.live) updatedAt = Date.now();
            setState(state.live, state.line);
          });
          source.addEventListener("error", () => {
            if (source.readyState !== EventSource.CLOSED) {
              setState(false, "stale: the web process is unreachable; reconnecting");
              return;
            }
            // The browser gave up (an answer other than 200): find out why, say so, and
            // try again later, since the reason may pass (a restart, a proxy's 502).
            const delay = retryDelay;
            retryDelay = Math.min(retryDelay * 2, 30000);
            const later = "; retrying in " + Math.round(delay / 1000) + " s";
            fetch("/", { method: "HEAD", cache: "no-store" }).then((answer) => {
              const why = answer.status === 401
                ? "the web process wants its token: open the address it printed, with ?token=..."
                : "the web process answered " + answer.status;
              setState(false, "stale: " + why + later);
            }, () => {
              setState(false, "stale: the web process is unreachable" + later);
            });
            setTimeout(listen, delay);
          });
        }
        listen();
        </script>
        </body>
        </html>

        """
}
