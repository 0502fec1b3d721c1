/// The one page of `countries web`: HTML, CSS and JavaScript in one document built into the
/// binary (nothing fetched from elsewhere).
///
/// The page follows `/events` (Server-Sent Events; see ``WebPageModel``) and re-renders only
/// the row a `change` names. Each row is a real table row with `data-index`, `data-name` and
/// `data-visited`; skeleton rows (shown whenever the state is not live) carry no name. A click
/// on a row's button, or Space/Enter on it, posts `/toggle?index=I`; the answer's text goes to
/// the status line. A `?token=` in the page's address is passed on to both.
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
        :root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1b1b; --muted: #6b6b6b; --line: #d8d8d8;
          --visited: #0a7d32; --stale: #a15c00; --focus: #1a5fd1; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #151515; --fg: #e8e8e8; --muted: #9a9a9a; --line: #333333; --visited: #5fd38a;
            --stale: #f0b45a; --focus: #7fb0ff; }
        }
        body { background: var(--bg); color: var(--fg); font: 15px/1.4 system-ui, sans-serif; margin: 1.5rem; }
        h1 { font-size: 1.3rem; margin: 0 0 .5rem; }
        #state { font-weight: 600; }
        #state.stale { color: var(--stale); }
        #status { min-height: 1.4em; color: var(--muted); }
        table { border-collapse: collapse; min-width: 22rem; }
        th, td { text-align: left; padding: .2rem .6rem; border-bottom: 1px solid var(--line); }
        td.index { color: var(--muted); text-align: right; }
        button.country { all: unset; cursor: pointer; display: block; width: 100%; }
        button.country:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
        tr[data-visited="true"] td.mark { color: var(--visited); }
        tr.skeleton td { color: var(--muted); }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        tr.skeleton span { display: inline-block; width: 8rem; height: .8em; background: var(--line); border-radius: 3px; }
        </style>
        </head>
        <body>
        <h1>Countries</h1>
        <p>State: <span id="state" class="stale" role="status">stale: connecting to the web process</span></p>
        <p id="status" aria-live="polite"></p>
        <table>
        <caption class="visually-hidden">Countries; press Space or Enter on a country to toggle visited</caption>
        <thead><tr><th scope="col">#</th><th scope="col">Country</th><th scope="col">Visited</th></tr></thead>
        <tbody id="rows"></tbody>
        </table>
        <script>
        "use strict";
        const token = new URLSearchParams(location.search).get("token");
        const suffix = token ? "token=" + encodeURIComponent(token) : "";
        const changeToken = (document.querySelector('meta[name="countries-change"]') || {}).content || "";
        const body = document.getElementById("rows");
        const stateLine = document.getElementById("state");
        const statusLine = document.getElementById("status");
        let rows = [];
        let live = false;

        function rowElement(index) {
          const tr = document.createElement("tr");
          tr.dataset.index = String(index);
          const row = rows[index];
          const cells = [document.createElement("td"), document.createElement("td"), document.createElement("td")];
          cells[0].className = "index";
          cells[0].textContent = String(index);
          cells[2].className = "mark";
          if (live && row) {
            tr.dataset.name = row.name;
            tr.dataset.visited = row.visited ? "true" : "false";
            const button = document.createElement("button");
            button.className = "country";
            button.type = "button";
            button.textContent = row.name;
            button.setAttribute("aria-pressed", row.visited ? "true" : "false");
            button.setAttribute("aria-label", row.name + (row.visited ? ", visited" : ", not visited") + "; toggle");
            button.addEventListener("click", () => toggle(index));
            cells[1].appendChild(button);
            cells[2].textContent = row.visited ? "\\u2713 visited" : "";
          } else {
            tr.className = "skeleton";
            tr.setAttribute("aria-hidden", "true");
            cells[1].appendChild(document.createElement("span"));
          }
          cells.forEach((cell) => tr.appendChild(cell));
          return tr;
        }

        function renderAll() {
          const focused = document.activeElement && document.activeElement.closest("tr");
          const focusIndex = focused ? focused.dataset.index : null;
          body.replaceChildren(...rows.map((_, index) => rowElement(index)));
          if (focusIndex !== null) focusRow(Number(focusIndex));
        }

        function renderRow(index) {
          const old = body.children[index];
          if (!old) { renderAll(); return; }
          const hadFocus = old.contains(document.activeElement);
          const fresh = rowElement(index);
          body.replaceChild(fresh, old);
          if (hadFocus) focusRow(index);
        }

        function focusRow(index) {
          const button = body.children[index] && body.children[index].querySelector("button");
          if (button) button.focus();
        }

        function setState(isLive, line) {
          const changed = isLive !== live;
          live = isLive;
          stateLine.textContent = line;
          stateLine.className = live ? "" : "stale";
          if (changed) renderAll();
        }

        async function toggle(index) {
          try {
            const answer = await fetch("/toggle?index=" + index + (suffix ? "&" + suffix : ""),
              { method: "POST", headers: { "X-Countries-Change": changeToken } });
            const result = await answer.json();
            statusLine.textContent = result.status;
          } catch (error) {
            statusLine.textContent = "not toggled: the web process did not answer (" + error + ")";
          }
        }

        body.addEventListener("keydown", (event) => {
          const tr = event.target.closest("tr");
          if (!tr) return;
          const index = Number(tr.dataset.index);
          if (event.key === "ArrowDown") { focusRow(Math.min(index + 1, rows.length - 1)); event.preventDefault(); }
          if (event.key === "ArrowUp") { focusRow(Math.max(index - 1, 0)); event.preventDefault(); }
          if (event.key === "Home") { focusRow(0); event.preventDefault(); }
          if (event.key === "End") { focusRow(rows.length - 1); event.preventDefault(); }
        });

        // The rows' store: seqs mean something only within one store, so a stream that
        // resumed by Last-Event-ID onto another store (the web process restarted while the
        // service changed stores) is replaced by a fresh one, which starts with a snapshot.
        let rowsStore = null;
        let source = null;
        function listen() {
          source = new EventSource("/events" + (suffix ? "?" + suffix : ""));
          source.addEventListener("snapshot", (event) => {
            const snapshot = JSON.parse(event.data);
            rows = snapshot.countries;
            rowsStore = snapshot.store || null;
            renderAll();
          });
          source.addEventListener("change", (event) => {
            const change = JSON.parse(event.data);
            rows[change.index] = { index: change.index, name: change.name, visited: change.visited };
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
            setState(state.live, state.line);
          });
          source.addEventListener("error", () => {
            setState(false, "stale: the web process is unreachable; reconnecting");
          });
        }
        listen();
        </script>
        </body>
        </html>

        """
}
