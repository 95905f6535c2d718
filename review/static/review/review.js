// The editors' pages: the record page's keyboard review, image operations without a page
// reload, the one confirmation dialog, the soft claim's sign of life; the compare view's and
// the reason page's keys. Every key presses a button of the page (or submits its form), so a
// key goes through the same view, service and stale-page check as the mouse.
//
// Words come from Django's JavaScript catalog (the admin's jsi18n, loaded before this file);
// ids come from data attributes, never from the text a page shows.
"use strict";
(() => {
  // From the catalog: gettext("…"), and interpolate("…%s…", [value]) or with named values.
  const { gettext, interpolate } = window;

  const TYPING = "textarea, select, [contenteditable=''], [contenteditable=true], input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=submit]):not([type=reset])";
  const CLAIM_PING_MS = 60 * 1000;

  // Single-key shortcuts (a letter, "?") can be turned off (WCAG 2.1.4), from the keys list;
  // the choice is the browser's, kept across pages. Arrows, Enter, Escape and Ctrl+S stay.
  const SINGLE_KEYS = "review.singleKeys";
  const singleKeysOn = () => window.localStorage.getItem(SINGLE_KEYS) !== "off";
  const isSingleKey = (event) => event.key.length === 1;

  const typing = (target) => Boolean(target?.closest?.(TYPING));
  const dialogOpen = () => Boolean(document.querySelector("dialog[open]"));

  function makeDialog(id, html) {
    const dialog = document.createElement("dialog");
    dialog.id = id;
    dialog.className = "review-dialog";
    dialog.innerHTML = html;
    document.body.append(dialog);
    return dialog;
  }

  // --- the one confirmation: a dialog of the page (never window.confirm): Enter accepts,
  // Escape cancels, and a browser test can see and press it as an editor does.
  let confirmDialog = null;
  function askConfirm(question, { yes, no = gettext("Cancel") }, onYes) {
    if (!confirmDialog) {
      confirmDialog = makeDialog("review-confirm",
        '<form method="dialog"><p class="review-confirm-question"></p>' +
        '<div class="review-dialog-buttons"><button value="yes" class="review-confirm-yes"></button>' +
        '<button value="no" class="review-confirm-no"></button></div></form>');
    }
    confirmDialog.querySelector(".review-confirm-question").textContent = question;
    confirmDialog.querySelector(".review-confirm-yes").textContent = yes;
    confirmDialog.querySelector(".review-confirm-no").textContent = no;
    confirmDialog.returnValue = "";
    confirmDialog.onclose = () => {
      if (confirmDialog.returnValue === "yes") { onYes(); }
    };
    confirmDialog.showModal();
    confirmDialog.querySelector(".review-confirm-yes").focus();
  }

  // A click that needs a yes first: the second click (confirmed) goes through.
  function confirmThenClick(button, question, labels) {
    askConfirm(question, labels, () => {
      button.dataset.confirmed = "yes";
      button.click();
      delete button.dataset.confirmed;
    });
  }

  // The question of a grid tile's Delete, worded here rather than 500 times in the page.
  function tileQuestion(button) {
    const tile = button.closest(".review-tile");
    const values = { number: tile.dataset.number, id: tile.dataset.imageId };
    let question = interpolate(gettext("Delete image %(number)s (id %(id)s) from this album?"), values, true);
    if (tile.classList.contains("is-cover")) {
      question += " " + gettext("It is the cover: the cover moves to the first remaining main image.");
    }
    return question + " " + gettext("Editors cannot undo this.");
  }

  // A button with data-confirm asks first (its own question, or a tile's).
  document.addEventListener("click", (event) => {
    const button = event.target.closest?.("button[data-confirm], input[data-confirm]");
    if (!button || button.dataset.confirmed === "yes") { return; }
    event.preventDefault();
    event.stopImmediatePropagation();
    const yes = button.dataset.confirmYes || gettext("Delete");
    confirmThenClick(button, button.dataset.confirm || tileQuestion(button), { yes });
  }, true);

  function say(text, level) {
    let list = document.querySelector("ul.messagelist");
    if (!list) {
      list = document.createElement("ul");
      list.className = "messagelist";
      document.getElementById("content").before(list);
    }
    list.setAttribute("role", "status");
    const item = document.createElement("li");
    item.className = level;
    item.textContent = text;
    list.replaceChildren(item);
  }

  const csrfToken = () => document.querySelector("input[name=csrfmiddlewaretoken]")?.value ?? "";

  // --- the record page ------------------------------------------------------------------
  function recordPage() {
    const ops = document.getElementById("image-ops");
    if (!document.getElementById("images") || !ops) { return; }
    const mainForm = document.querySelector("form[id$='_form']");
    let dirty = false;
    let focusedId = null;
    let busy = false;

    mainForm?.addEventListener("input", (event) => {
      if (event.target.form === mainForm) { dirty = true; }
    });
    // Reject, unpublish and skip leave the page: ask before unsaved edits are lost.
    document.addEventListener("click", (event) => {
      const button = event.target.closest?.("[data-review-leaves-edits]");
      if (!button || !dirty || button.dataset.confirmed === "yes") { return; }
      event.preventDefault();
      confirmThenClick(
        button,
        gettext("You have unsaved changes to the fields above. They will be lost. Continue?"),
        { yes: gettext("Leave without saving"), no: gettext("Stay on this page") },
      );
    });

    const tiles = () => [...document.querySelectorAll("#images .review-tile")];

    // Each tile's buttons, from the grid's template, put in as the tile comes near the
    // screen (or the keys act on it): the page itself holds no buttons per tile.
    function ensureActions(tile) {
      const template = document.getElementById("review-tile-actions");
      const images = document.getElementById("images");
      if (!template || !tile || tile.querySelector(".review-tile-actions")) { return; }
      const actions = template.content.firstElementChild.cloneNode(true);
      const url = images.dataset.opUrl;
      const placeholder = `/${images.dataset.imageId}/operation/`;
      const detail = tile.classList.contains("is-detail");
      for (const button of actions.querySelectorAll("button")) {
        const op = button.dataset.op;
        const applies = op === "delete" || (op === "cover" && !tile.classList.contains("is-cover")) ||
          (op === "detach" && detail) || (op === "attach-previous" && !detail && Boolean(tile.dataset.previous));
        if (!applies) { button.remove(); continue; }
        button.formAction = url.replace(placeholder, `/${tile.dataset.imageId}/${op}/`);
        if (op === "attach-previous") {
          button.title = interpolate(gettext("Make it a detail of %s"), [tile.dataset.previous]);
        }
      }
      tile.insertBefore(actions, tile.querySelector(".review-tick"));
    }

    const observer = "IntersectionObserver" in window ? new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (entry.isIntersecting) { ensureActions(entry.target); observer.unobserve(entry.target); }
      }
    }, { rootMargin: "1500px 0px" }) : null;

    // The tile as the server sent it, to tell after a redraw which tiles did not change.
    function adopt(tile) {
      tile.serverHtml = tile.outerHTML;
      if (observer) { observer.observe(tile); } else { ensureActions(tile); }
    }
    tiles().forEach(adopt);

    function focusTile(tile, { scroll = true } = {}) {
      for (const other of document.querySelectorAll("#images .review-tile[aria-current]")) {
        other.removeAttribute("aria-current");
        other.classList.remove("is-focused");
      }
      if (!tile) { focusedId = null; return; }
      ensureActions(tile);
      tile.setAttribute("aria-current", "true");
      tile.classList.add("is-focused");
      focusedId = tile.id;
      if (!tile.contains(document.activeElement)) { tile.focus({ preventScroll: true }); }
      if (scroll) { tile.scrollIntoView({ block: "nearest" }); }
    }

    const focused = () => (focusedId ? document.getElementById(focusedId) : null);

    function move(step) {
      const all = tiles();
      if (!all.length) { return; }
      const at = all.indexOf(focused());
      const next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(Math.max(at + step, 0), all.length - 1);
      focusTile(all[next]);
    }

    // Redraw the grid from the server's fragment, keeping every tile that did not change
    // (its picture stays loaded): one operation does not reload 500 pictures.
    function redraw(html) {
      const at = tiles().indexOf(focused());
      const keep = focusedId;
      focusTile(null);
      const template = document.createElement("template");
      template.innerHTML = html.trim();
      const fresh = template.content.querySelector("#images");
      const old = document.getElementById("images");
      const arrived = [];
      for (const tile of fresh.querySelectorAll(".review-tile")) {
        const before = old.querySelector(`#${tile.id}`);
        if (before && before.serverHtml === tile.outerHTML) { tile.replaceWith(before); } else { arrived.push(tile); }
      }
      old.replaceWith(fresh);
      arrived.forEach(adopt);
      const now = tiles();
      const target = (keep && document.getElementById(keep)) || now[Math.min(at, now.length - 1)] || null;
      if (at >= 0 && target) { focusTile(target); }
    }

    function setToken(token) {
      for (const input of document.querySelectorAll("input[name=loaded]")) { input.value = token; }
    }

    document.addEventListener("submit", async (event) => {
      const button = event.submitter;
      if (event.target !== ops || !button?.hasAttribute("data-review-curation")) { return; }
      event.preventDefault();
      if (busy) { return; }
      busy = true;
      const tile = button.closest(".review-tile");
      if (tile) { focusTile(tile); }
      try {
        const response = await fetch(button.formAction, {
          method: "POST",
          body: new FormData(ops, button),
          headers: { "X-Requested-With": "fetch" },
          credentials: "same-origin",
        });
        const answer = await response.json();
        if (answer.ok) {
          setToken(answer.token);
          redraw(answer.grid);
          const total = document.getElementById("review-image-total");
          if (total) { total.textContent = answer.image_total; }
          say(answer.message, "success");
        } else {
          say(answer.message, "error");
        }
      } catch {
        say(gettext("The server did not answer. Reload the page and try again."), "error");
      } finally {
        busy = false;
      }
    });

    // The full-size view shows the 1200 px rendition; the original is a link away.
    const lightbox = makeDialog("review-lightbox",
      '<form method="dialog"><img alt=""><p class="review-lightbox-caption"></p>' +
      '<p><a class="review-lightbox-original" target="_blank"></a></p>' +
      '<button class="review-lightbox-close"></button></form>');
    lightbox.querySelector(".review-lightbox-close").textContent = gettext("Close (Esc)");
    lightbox.querySelector(".review-lightbox-original").textContent = gettext("Open the original");
    // A click on a picture opens this view too; a click that asks for a new tab or window
    // (a middle click, Ctrl or Shift) still follows the link to the original.
    document.addEventListener("click", (event) => {
      const link = event.target.closest?.("#images .review-tile > a");
      if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) { return; }
      event.preventDefault();
      const tile = link.closest(".review-tile");
      focusTile(tile, { scroll: false });
      openFull(tile);
    });
    function openFull(tile) {
      const number = tile.dataset.number;
      const image = lightbox.querySelector("img");
      image.hidden = !tile.dataset.preview;
      image.src = tile.dataset.preview || "";
      image.alt = interpolate(gettext("image %s full size"), [number]);
      const caption = tile.dataset.preview ? gettext("Image %s") : gettext("Image %s: no rendition yet");
      lightbox.querySelector(".review-lightbox-caption").textContent = interpolate(caption, [number]);
      lightbox.querySelector(".review-lightbox-original").href = tile.querySelector("a").href;
      lightbox.showModal();
    }

    const keys = makeDialog("review-keys", document.getElementById("review-keys-template").innerHTML);
    const toggle = keys.querySelector("#review-single-keys");
    if (toggle) {
      // The label says the state in words, not only the box's tick.
      const state = keys.querySelector("#review-single-keys-state");
      const show = () => { state.textContent = toggle.checked ? gettext("on") : gettext("off"); };
      toggle.checked = singleKeysOn();
      show();
      toggle.addEventListener("change", () => {
        window.localStorage.setItem(SINGLE_KEYS, toggle.checked ? "on" : "off");
        show();
      });
    }
    // The grid's "Keys" button opens the list too (with single keys off, "?" does not).
    document.addEventListener("click", (event) => {
      if (event.target.closest?.("[data-review-keys]")) { keys.showModal(); }
    });

    // Tab reaches every tile: the tile Tab lands on is the one the keys act on.
    document.addEventListener("focusin", (event) => {
      const tile = event.target.closest?.("#images .review-tile");
      if (tile && tile.id !== focusedId) { focusTile(tile, { scroll: false }); }
    });

    // Back from the compare view (its "Back", or after deleting there): the page opens on
    // the image the editor was on (the URL's #image-N), focused for the keys.
    const arrived = window.location.hash.startsWith("#image-") ? document.getElementById(window.location.hash.slice(1)) : null;
    if (arrived?.classList.contains("review-tile")) { focusTile(arrived); }

    function press(selector) {
      const button = document.querySelector(selector);
      button?.click();
      return Boolean(button);
    }

    function onTile(key) {
      const tile = focused();
      if (!tile) { say(gettext("Choose an image first: → and ← move between them."), "info"); return; }
      ensureActions(tile);
      const button = tile.querySelector(`[data-key='${key}']`);
      if (button) { button.click(); } else { say(gettext("That key does nothing for this image."), "info"); }
    }

    document.addEventListener("keydown", (event) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && (event.key === "s" || event.key === "S")) {
        // Save, even from a field: the browser's "save page" is of no use here.
        event.preventDefault();
        if (!dialogOpen()) { press(".submit-row input[name=_continue]"); }
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) { return; }
      if (dialogOpen()) { return; }
      if (typing(event.target)) {
        if (event.key === "Escape") { event.target.blur(); }  // out of the field: keys again
        return;
      }
      if (isSingleKey(event) && !singleKeysOn()) { return; }
      const key = event.key;
      if (key === "ArrowRight" || key === "ArrowLeft") {
        event.preventDefault();
        move(key === "ArrowRight" ? 1 : -1);
      } else if (key === "Enter") {
        if (!focused() || event.target.closest("a, button")) { return; }
        event.preventDefault();
        openFull(focused());
      } else if (["x", "c", "p", "d"].includes(key)) {
        event.preventDefault();
        onTile(key);
      } else if (key === "v") {
        const compare = focused()?.dataset.compare;
        if (compare) { window.location.href = compare; }
      } else if (["a", "r", "s"].includes(key)) {
        event.preventDefault();
        press(`.submit-row [data-key='${key}']`);
      } else if (key === "u" || key === "m") {
        // The repeated album's decisions (the banner at the top of the page).
        event.preventDefault();
        press(`#review-repeat [data-key='${key}']`);
      } else if (key === "?") {
        event.preventDefault();
        keys.showModal();
      }
    });

    // The soft claim: a ping a minute while the editor does something on the page, so an
    // album left open in a forgotten tab is free for the others after a few minutes.
    const openBy = document.getElementById("review-open-by");
    let active = false;
    for (const name of ["keydown", "mousedown", "scroll", "input"]) {
      document.addEventListener(name, () => { active = true; }, { passive: true });
    }
    if (openBy?.dataset.claimUrl) {
      window.setInterval(async () => {
        if (!active) { return; }
        active = false;
        const body = new FormData();
        body.append("csrfmiddlewaretoken", csrfToken());
        try {
          const response = await fetch(openBy.dataset.claimUrl, { method: "POST", body, credentials: "same-origin" });
          const answer = await response.json();
          openBy.hidden = !answer.open_by;
          openBy.querySelector("strong").textContent = answer.open_by || "";
        } catch {
          // The next ping tries again; a lapsed claim only lets another editor in.
        }
      }, CLAIM_PING_MS);
    }
  }

  // --- pages where a key presses the button that names it (data-key): the compare view ---
  function keyedPage() {
    if (!document.querySelector("[data-review-compare]")) { return; }
    document.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || dialogOpen() || typing(event.target)) { return; }
      if (isSingleKey(event) && !singleKeysOn()) { return; }
      const target = document.querySelector(`[data-review-compare] [data-key='${event.key}']`);
      if (target) { event.preventDefault(); target.click(); }
    });
  }

  // --- the reason page of reject / unpublish: the reason has the focus; Enter confirms
  // (Shift+Enter for a new line).
  function reasonPage() {
    const reason = document.querySelector("#reason-form textarea[name=reason]");
    if (!reason) { return; }
    reason.focus();
    reason.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        reason.form.requestSubmit();
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    recordPage();
    keyedPage();
    reasonPage();
  });
})();
