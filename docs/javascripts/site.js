/* kafka-log-spec site: a link to a requirement works in any case (#roll-3, #Roll-3 as well as
   #ROLL-3). The build puts an empty element with the lower-case ID before each requirement
   anchor (docs/hooks/spec_pages.py, add_case_aliases), so #roll-3 scrolls there even without
   this script; here every case is sent on to the anchor itself, which then gets the :target
   highlight. */
(function () {
  function canonical(id) {
    var here = document.getElementById(id);
    if (here) {
      return here.classList.contains("klog-alias") ? here.getAttribute("data-for") : null;
    }
    var want = id.toLowerCase();
    var all = document.querySelectorAll("[id]");
    for (var i = 0; i < all.length; i++) {
      if (all[i].id.toLowerCase() === want && !all[i].classList.contains("klog-alias")) {
        return all[i].id;
      }
    }
    return null;
  }
  function follow() {
    var id;
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch (e) {
      return;
    }
    var target = id && canonical(id);
    if (target && target !== id) location.replace("#" + encodeURIComponent(target));
  }
  window.addEventListener("hashchange", follow);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", follow);
  } else {
    follow();
  }
})();

/* A diagram or table wider than the screen (390 px phones) is never cut off without a cue:
   each scrolling box of ours gets a frame holding a "scroll sideways" line, shown while the
   box overflows, and a fading right edge while there is more to the right (extra.css). */
(function () {
  var SELECTOR = ".klog-scroll-x, .klog-diagram, .klog-scroll, .md-typeset__scrollwrap";
  function update(box) {
    var frame = box.parentElement;
    var overflows = box.scrollWidth > box.clientWidth + 1;
    frame.classList.toggle("klog-overflows", overflows);
    frame.classList.toggle("klog-more-right", overflows && box.scrollLeft + box.clientWidth < box.scrollWidth - 1);
  }
  function frame(box) {
    if (box.parentElement.classList.contains("klog-scroll-frame")) return;
    if (box.parentElement.closest(SELECTOR)) return; // the outermost box only
    var outer = document.createElement("div");
    outer.className = "klog-scroll-frame";
    var hint = document.createElement("div");
    hint.className = "klog-scroll-hint";
    hint.textContent = "Wider than the screen: scroll sideways \u2192";
    box.parentElement.insertBefore(outer, box);
    outer.appendChild(hint);
    outer.appendChild(box);
    box.classList.add("klog-scrolls");
    box.addEventListener("scroll", function () { update(box); }, { passive: true });
    update(box);
  }
  function all() {
    document.querySelectorAll(SELECTOR).forEach(function (box) {
      frame(box);
      if (box.classList.contains("klog-scrolls")) update(box);
    });
  }
  window.addEventListener("resize", all);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", all);
  } else {
    all();
  }
  // the theme swaps pages in place with navigation.instant; harmless without it
  if (window.document$ && window.document$.subscribe) window.document$.subscribe(all);
})();
