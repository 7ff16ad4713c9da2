// A classic script (not a module): it loads even where the page's module scripts cannot, e.g. in
// a frame sandboxed without allow-same-origin whose server sends no CORS headers. If the app has
// not started by the time the page has loaded (the fallback is still there), say why in the words
// that fit: file:// keeps the "serve it over http" text; any other address gets what the host
// must allow. No inline script: the page's Content-Security-Policy allows only 'self'.
(function () {
  function explain() {
    var box = document.getElementById('boot-fallback');
    if (!box || location.protocol === 'file:') return;
    var file = document.getElementById('boot-file');
    var origin = document.getElementById('boot-origin');
    if (file) file.hidden = true;
    if (origin) origin.hidden = false;
  }
  if (document.readyState === 'complete') explain();
  else window.addEventListener('load', explain);
})();
