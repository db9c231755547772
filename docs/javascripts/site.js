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
