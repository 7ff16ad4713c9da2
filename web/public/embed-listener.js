// Attention Playground: auto-height for embedded frames, without inline script or style (for
// course sites with a strict Content-Security-Policy). Load it once with
//   <script src="https://HOST/PATH/embed-listener.js" defer></script>
// (or copy this file next to the course page, so `script-src 'self'` covers it), and mark each
// frame:
//   <iframe data-attention-playground src="https://HOST/PATH/?embed=1#v=1" width="100%"
//           height="640" frameborder="0" title="Attention Playground"></iframe>
// data-maxheight="700" caps the height. A message is used only when it comes from one of these
// frames (its window, checked) and from the origin of the frame's address; a frame sandboxed
// without allow-same-origin posts from the origin "null", accepted for that frame only.
// An exercise's check (docs/exercises.md) from such a frame is dispatched on the frame as an
// `attention-playground:exercise` event: frame.addEventListener('attention-playground:exercise',
// function (e) { e.detail.passed … }).
(function () {
  'use strict';
  if (window.__attentionPlaygroundListener) return;
  window.__attentionPlaygroundListener = true;
  function frameFor(source) {
    var frames = document.querySelectorAll('iframe[data-attention-playground]');
    for (var i = 0; i < frames.length; i++) if (frames[i].contentWindow === source) return frames[i];
    return null;
  }
  function originOf(f) {
    try {
      return new URL(f.src, location.href).origin;
    } catch (err) {
      return '';
    }
  }
  function opaque(f) {
    var s = f.getAttribute('sandbox');
    return s !== null && !/(^|\s)allow-same-origin(\s|$)/.test(s);
  }
  window.addEventListener('message', function (e) {
    var d = e.data;
    if (d && d.type === 'attention-playground:exercise' && d.version === 1) {
      var x = frameFor(e.source);
      if (x && (e.origin === originOf(x) || (e.origin === 'null' && opaque(x))))
        x.dispatchEvent(new CustomEvent(d.type, { detail: d }));
      return;
    }
    if (!d || d.type !== 'attention-playground:resize' || d.version !== 1) return;
    if (typeof d.height !== 'number' || !isFinite(d.height)) return;
    var f = frameFor(e.source);
    if (!f) return;
    if (e.origin !== originOf(f) && !(e.origin === 'null' && opaque(f))) return;
    var max = parseInt(f.getAttribute('data-maxheight') || '', 10);
    if (!(max >= 100 && max <= 10000)) max = 10000;
    // The CSSOM (element.style) is not inline style: a strict policy allows it.
    f.style.height = Math.min(Math.max(d.height, 100), max) + 'px';
  });
})();
