// The record page: confirmation before irreversible curation, and a warning before a button
// that leaves the page would drop unsaved field edits.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var form = document.querySelector("form[id$='_form']");
  var dirty = false;
  if (form) {
    form.addEventListener("input", function (event) {
      if (event.target.form === form) { dirty = true; }
    });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button, input[type=submit]");
    if (!button) { return; }
    var leaves = button.hasAttribute("data-review-curation") || button.hasAttribute("data-review-leaves-edits");
    if (leaves && dirty && !window.confirm("You have unsaved changes to the fields above. They will be lost. Continue?")) {
      event.preventDefault();
      return;
    }
    var question = button.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); }
  });
});
