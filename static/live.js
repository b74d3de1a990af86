/* Live activity (views/pulse.py): what htmx attributes cannot say without eval (allowEval is
   false, no hx-on under the CSP).  (1) When the pulse reports that the agent wrote, refresh
   each [data-live] region it names, unless the person is in the middle of something there (a
   focused or edited field): then offer a "Show the change" button instead, so no typed text is
   lost.  (2) A hidden tab does not poll: the pulse's request is cancelled while hidden, and
   sent once as soon as the tab is shown again. */
(function () {
  "use strict";

  function edited(field) {
    if (field.type === "checkbox" || field.type === "radio") return field.checked !== field.defaultChecked;
    if (field.tagName === "SELECT") {
      // With no option marked selected in the markup, the browser shows the first one.
      var initial = 0;
      for (var i = 0; i < field.options.length; i++) {
        if (field.options[i].defaultSelected) { initial = i; break; }
      }
      return field.selectedIndex !== initial;
    }
    return field.value !== field.defaultValue;
  }

  function busy(region) {
    var active = document.activeElement;
    if (active && region.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) return true;
    var fields = region.querySelectorAll("input, textarea, select");
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].type !== "hidden" && edited(fields[i])) return true;
    }
    return false;
  }

  function refresh(region) {
    if (!region.id) return;
    var url = region.getAttribute("data-live-url") || window.location.href;
    htmx.ajax("GET", url, {target: "#" + region.id, select: "#" + region.id, swap: "outerHTML"});
  }

  function offer(region) {
    if (region.querySelector(".live-offer")) return;
    var pulse = document.getElementById("pulse");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "live-offer";
    button.setAttribute("data-live-offer", "");
    button.textContent = (pulse && pulse.getAttribute("data-show-label")) || "Show the change";
    button.addEventListener("click", function () { refresh(region); });
    region.insertBefore(button, region.firstChild);
  }

  document.addEventListener("agentWrote", function (evt) {
    var named = (evt.detail && evt.detail.regions) || [];
    var regions = document.querySelectorAll("[data-live]");
    for (var i = 0; i < regions.length; i++) {
      var wants = regions[i].getAttribute("data-live").split(/\s+/);
      if (!wants.some(function (w) { return named.indexOf(w) >= 0; })) continue;
      if (busy(regions[i])) offer(regions[i]); else refresh(regions[i]);
    }
  });

  document.addEventListener("htmx:beforeRequest", function (evt) {
    if (evt.target && evt.target.id === "pulse" && document.visibilityState === "hidden") {
      evt.preventDefault();
    }
  });

  document.addEventListener("visibilitychange", function () {
    var pulse = document.getElementById("pulse");
    if (pulse && document.visibilityState === "visible") htmx.trigger(pulse, "live-now");
  });
})();
