// The editors' pages: the record page's keyboard review, image operations without a page
// reload, the in-page confirmation, the soft claim's sign of life; the compare view's and
// the reason page's keys. Every key presses a button of the page (or submits its form), so a
// key goes through the same view, service and stale-page check as the mouse.
"use strict";
(function () {
  var TYPING = "textarea, select, [contenteditable=''], [contenteditable=true], input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=submit]):not([type=reset])";
  var CLAIM_PING_MS = 60 * 1000;

  function typing(target) {
    return !!(target && target.closest && target.closest(TYPING));
  }

  function dialogOpen() {
    return !!document.querySelector("dialog[open]");
  }

  // --- a dialog of our own instead of window.confirm: Enter accepts, Escape cancels, and it
  // is part of the page (a browser test can see and press it, as an editor does).
  function makeDialog(id, html) {
    var dialog = document.createElement("dialog");
    dialog.id = id;
    dialog.className = "review-dialog";
    dialog.innerHTML = html;
    document.body.appendChild(dialog);
    return dialog;
  }

  var confirmDialog = null;
  function askConfirm(question, onYes) {
    if (!confirmDialog) {
      confirmDialog = makeDialog("review-confirm",
        '<form method="dialog"><p class="review-confirm-question"></p>' +
        '<div class="review-dialog-buttons"><button value="yes" class="review-confirm-yes">Delete</button>' +
        '<button value="no" class="review-confirm-no">Cancel</button></div></form>');
    }
    confirmDialog.querySelector(".review-confirm-question").textContent = question;
    confirmDialog.returnValue = "";
    confirmDialog.onclose = function () {
      if (confirmDialog.returnValue === "yes") { onYes(); }
    };
    confirmDialog.showModal();
    confirmDialog.querySelector(".review-confirm-yes").focus();
  }

  // The question of a grid tile's Delete, worded here rather than 500 times in the page.
  function tileQuestion(button) {
    var tile = button.closest(".review-tile");
    var question = "Delete image " + tile.dataset.number + " (" + tile.querySelector(".review-tile-meta").textContent.match(/id \d+/)[0] + ") from this album?";
    if (tile.classList.contains("is-cover")) { question += " It is the cover: the cover moves to the first remaining main image."; }
    return question + " Editors cannot undo this.";
  }

  // A button with data-confirm asks first; the second click (confirmed) goes through.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-confirm], input[data-confirm]");
    if (!button || button.dataset.confirmed === "yes") { return; }
    event.preventDefault();
    event.stopImmediatePropagation();
    askConfirm(button.getAttribute("data-confirm") || tileQuestion(button), function () {
      button.dataset.confirmed = "yes";
      button.click();
      delete button.dataset.confirmed;
    });
  }, true);

  function say(text, level) {
    var list = document.querySelector("ul.messagelist");
    if (!list) {
      list = document.createElement("ul");
      list.className = "messagelist";
      var content = document.getElementById("content");
      content.parentNode.insertBefore(list, content);
    }
    list.setAttribute("role", "status");
    list.innerHTML = "";
    var item = document.createElement("li");
    item.className = level;
    item.textContent = text;
    list.appendChild(item);
  }

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // --- the record page ------------------------------------------------------------------
  function recordPage() {
    var grid = document.getElementById("images");
    var ops = document.getElementById("image-ops");
    if (!grid || !ops) { return; }
    var mainForm = document.querySelector("form[id$='_form']");
    var dirty = false;
    var focusedId = null;
    var busy = false;

    if (mainForm) {
      mainForm.addEventListener("input", function (event) {
        if (event.target.form === mainForm) { dirty = true; }
      });
    }
    // Reject, unpublish and skip leave the page: warn before unsaved edits are lost.
    document.addEventListener("click", function (event) {
      var button = event.target.closest && event.target.closest("[data-review-leaves-edits]");
      if (button && dirty && !window.confirm("You have unsaved changes to the fields above. They will be lost. Continue?")) {
        event.preventDefault();
      }
    });

    function tiles() { return Array.prototype.slice.call(document.querySelectorAll("#images .review-tile")); }

    function focusTile(tile) {
      tiles().forEach(function (other) {
        other.removeAttribute("aria-current");
        other.classList.remove("is-focused");
      });
      if (!tile) { focusedId = null; return; }
      tile.setAttribute("aria-current", "true");
      tile.classList.add("is-focused");
      focusedId = tile.id;
      tile.focus({ preventScroll: true });
      tile.scrollIntoView({ block: "nearest" });
    }

    function focused() { return focusedId ? document.getElementById(focusedId) : null; }

    function move(step) {
      var all = tiles();
      if (!all.length) { return; }
      var at = all.indexOf(focused());
      var next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(Math.max(at + step, 0), all.length - 1);
      focusTile(all[next]);
    }

    // Redraw the grid from the server's fragment, keeping every tile that did not change
    // (its picture stays loaded): one operation does not reload 500 pictures.
    function redraw(html) {
      var all = tiles();
      var at = all.indexOf(focused());
      var keep = focusedId;
      focusTile(null);
      var template = document.createElement("template");
      template.innerHTML = html.trim();
      var fresh = template.content.querySelector("#images");
      var old = document.getElementById("images");
      fresh.querySelectorAll(".review-tile").forEach(function (tile) {
        var before = old.querySelector("#" + tile.id);
        if (before && before.outerHTML === tile.outerHTML) { tile.replaceWith(before); }
      });
      old.replaceWith(fresh);
      var now = tiles();
      var target = (keep && document.getElementById(keep)) || now[Math.min(at, now.length - 1)] || null;
      if (at >= 0 && target) { focusTile(target); }
    }

    function setToken(token) {
      document.querySelectorAll("input[name=loaded]").forEach(function (input) { input.value = token; });
    }

    document.addEventListener("submit", function (event) {
      var button = event.submitter;
      if (event.target !== ops || !button || !button.hasAttribute("data-review-curation")) { return; }
      event.preventDefault();
      if (busy) { return; }
      busy = true;
      var tile = button.closest(".review-tile");
      if (tile) { focusTile(tile); }
      fetch(button.formAction, {
        method: "POST",
        body: new FormData(ops, button),
        headers: { "X-Requested-With": "fetch" },
        credentials: "same-origin"
      }).then(function (response) {
        return response.json();
      }).then(function (answer) {
        if (answer.ok) {
          setToken(answer.token);
          redraw(answer.grid);
          var total = document.getElementById("review-image-total");
          if (total) { total.textContent = answer.image_total; }
          say(answer.message, "success");
        } else {
          say(answer.message, "error");
        }
      }).catch(function () {
        say("The server did not answer. Reload the page and try again.", "error");
      }).then(function () { busy = false; });
    });

    var lightbox = makeDialog("review-lightbox", '<form method="dialog"><img alt=""><p class="review-lightbox-caption"></p><button class="review-lightbox-close">Close (Esc)</button></form>');
    function openFull(tile) {
      lightbox.querySelector("img").src = tile.querySelector("a").href;
      lightbox.querySelector("img").alt = "image " + tile.dataset.number + " full size";
      lightbox.querySelector(".review-lightbox-caption").textContent = "Image " + tile.dataset.number;
      lightbox.showModal();
    }

    var keys = makeDialog("review-keys", document.getElementById("review-keys-template").innerHTML);

    function press(selector) {
      var button = document.querySelector(selector);
      if (button) { button.click(); }
      return !!button;
    }

    function onTile(key) {
      var tile = focused();
      if (!tile) { say("Choose an image first: → and ← move between them.", "info"); return; }
      var button = tile.querySelector("[data-key='" + key + "']");
      if (button) { button.click(); } else { say("That key does nothing for this image.", "info"); }
    }

    document.addEventListener("keydown", function (event) {
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
      var key = event.key;
      if (key === "ArrowRight" || key === "ArrowLeft") {
        event.preventDefault();
        move(key === "ArrowRight" ? 1 : -1);
      } else if (key === "Enter") {
        if (!focused() || event.target.closest("a, button")) { return; }
        event.preventDefault();
        openFull(focused());
      } else if (key === "x" || key === "c" || key === "p" || key === "d") {
        event.preventDefault();
        onTile(key);
      } else if (key === "v") {
        var tile = focused();
        if (tile && tile.dataset.compare) { window.location.href = tile.dataset.compare; }
      } else if (key === "a" || key === "r" || key === "s") {
        event.preventDefault();
        press(".submit-row [data-key='" + key + "']");
      } else if (key === "?") {
        event.preventDefault();
        keys.showModal();
      }
    });

    // The soft claim: a ping a minute while the editor does something on the page, so an
    // album left open in a forgotten tab is free for the others after a few minutes.
    var openBy = document.getElementById("review-open-by");
    var active = false;
    ["keydown", "mousedown", "scroll", "input"].forEach(function (name) {
      document.addEventListener(name, function () { active = true; }, { passive: true });
    });
    if (openBy && openBy.dataset.claimUrl) {
      window.setInterval(function () {
        if (!active) { return; }
        active = false;
        var body = new FormData();
        body.append("csrfmiddlewaretoken", csrfToken());
        fetch(openBy.dataset.claimUrl, { method: "POST", body: body, credentials: "same-origin" })
          .then(function (response) { return response.json(); })
          .then(function (answer) {
            openBy.hidden = !answer.open_by;
            openBy.querySelector("strong").textContent = answer.open_by || "";
          }).catch(function () {});
      }, CLAIM_PING_MS);
    }
  }

  // --- pages where a key presses the button that names it (data-key): the compare view ---
  function keyedPage() {
    if (!document.querySelector("[data-review-compare]")) { return; }
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey || dialogOpen() || typing(event.target)) { return; }
      var target = document.querySelector("[data-review-compare] [data-key='" + event.key + "']");
      if (target) { event.preventDefault(); target.click(); }
    });
  }

  // --- the reason page of reject / unpublish: the reason has the focus; Enter confirms
  // (Shift+Enter for a new line).
  function reasonPage() {
    var reason = document.querySelector("#reason-form textarea[name=reason]");
    if (!reason) { return; }
    reason.focus();
    reason.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        reason.form.requestSubmit();
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    recordPage();
    keyedPage();
    reasonPage();
  });
})();
