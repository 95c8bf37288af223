// The live parts of the approval page: the list refreshes itself when the
// vault changes (server-sent events), and a request page says when its
// request left its folder meanwhile. Everything shown comes from the
// server's own templates; nothing here builds markup from data.
"use strict";
(function () {
  const es = new EventSource("/events");
  es.addEventListener("changed", async function () {
    const list = document.getElementById("list");
    if (list) {
      const r = await fetch("/list", { credentials: "same-origin", cache: "no-store" });
      if (r.ok) list.innerHTML = await r.text();
    }
    const req = document.getElementById("request");
    if (req) {
      const q = new URLSearchParams({ folder: req.dataset.folder, name: req.dataset.name });
      const r = await fetch("/still?" + q.toString(), { credentials: "same-origin", cache: "no-store" });
      if (r.status === 410) document.getElementById("gone").hidden = false;
    }
  });
})();
