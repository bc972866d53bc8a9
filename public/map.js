/* /map: every rig with a fix as a marker coloured by status, clustered when zoomed out, reloaded
 * from /map/rigs.json every data-refresh seconds (or ?refresh=N) without moving the view: markers
 * are updated in place and the map is fitted to the rigs only on the first load. Popups are built
 * with textContent; the only link is /rigs/ + the rig id (a DNS label), URL-encoded. */
(function () {
  'use strict';

  var STATUSES = { online: true, stale: true, offline: true };
  var RIG_ID = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

  var el = document.getElementById('map');
  var query = new URLSearchParams(window.location.search);
  var refreshS = Number(query.get('refresh')) || Number(el.getAttribute('data-refresh')) || 60;
  var rigsUrl = el.getAttribute('data-rigs-url');
  var countEl = document.querySelector('.map-count');

  var map = L.map(el, { minZoom: 1, maxZoom: 18, worldCopyJump: true }).setView([20, 0], 2, { animate: false });
  window.rigdMapBase.baseLayer(map, el.getAttribute('data-tiles') || '');

  /** Progress of adding markers, for whoever watches the page (the bench waits for done). */
  var state = { total: 0, added: 0, done: false, firstRenderMs: null, loads: 0, rigs: 0, error: null };
  var cluster = L.markerClusterGroup({
    chunkedLoading: true,
    // Short slices of work, so that a click or a pan is answered while 10,000 markers go in.
    chunkInterval: 50,
    chunkProgress: function (processed, total) {
      state.added = processed;
      if (processed >= total && !state.done && state.loads === 1) {
        state.done = true;
        state.firstRenderMs = performance.now();
      }
    },
  });
  map.addLayer(cluster);

  /** id -> { marker, rig } */
  var markers = new Map();

  /** A rig whose last report had no fix stands at its last known one: a distinct (dashed, faded) marker. */
  function icon(status, lastFix) {
    var className = 'rig-marker dot dot-' + status + (lastFix ? ' rig-marker-last-fix' : '');
    return L.divIcon({ className: className, iconSize: [14, 14], iconAnchor: [7, 7], popupAnchor: [0, -7], html: '' });
  }

  function text(tag, className, value) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    node.textContent = value;
    return node;
  }

  function popupFor(entry) {
    return function () {
      var rig = entry.rig;
      var box = document.createElement('div');
      box.className = 'rig-popup';
      var head = document.createElement('div');
      var dot = text('span', 'dot dot-' + rig.status, '');
      dot.setAttribute('role', 'img');
      dot.setAttribute('aria-label', rig.status);
      head.appendChild(dot);
      head.appendChild(document.createTextNode(' '));
      head.appendChild(text('span', 'id', rig.id));
      head.appendChild(document.createTextNode(' '));
      head.appendChild(text('span', 'status', rig.status));
      box.appendChild(head);
      box.appendChild(text('div', 'branch', rig.branch + ' (' + rig.version + ')'));
      var last = document.createElement('div');
      last.appendChild(document.createTextNode('Last report '));
      var time = text('time', 'last-report', window.rigdMapBase.timeAgo(rig.last_report, Date.now()));
      time.setAttribute('datetime', rig.last_report);
      time.title = new Date(rig.last_report).toString();
      last.appendChild(time);
      box.appendChild(last);
      if (rig.last_fix) {
        var fix = text('div', 'last-fix', 'No fix in the last report; last fix ');
        var fixTime = text('time', '', window.rigdMapBase.timeAgo(rig.last_fix, Date.now()));
        fixTime.setAttribute('datetime', rig.last_fix);
        fixTime.title = new Date(rig.last_fix).toString();
        fix.appendChild(fixTime);
        box.appendChild(fix);
      }
      var link = text('a', 'rig-link', 'Rig page');
      link.href = '/rigs/' + encodeURIComponent(rig.id);
      var p = document.createElement('div');
      p.appendChild(link);
      box.appendChild(p);
      return box;
    };
  }

  /** Only well-formed entries become markers. */
  function valid(rig) {
    return (
      rig && typeof rig.id === 'string' && RIG_ID.test(rig.id) && STATUSES[rig.status] === true &&
      typeof rig.lat === 'number' && isFinite(rig.lat) && Math.abs(rig.lat) <= 90 &&
      typeof rig.lon === 'number' && isFinite(rig.lon) && Math.abs(rig.lon) <= 180 &&
      typeof rig.last_report === 'string' && (rig.last_fix === undefined || typeof rig.last_fix === 'string')
    );
  }

  function apply(rigs) {
    var seen = new Set();
    var added = [];
    var removed = [];
    rigs.forEach(function (raw) {
      if (!valid(raw)) return;
      var rig = { id: raw.id, lat: raw.lat, lon: raw.lon, status: raw.status, last_report: raw.last_report, last_fix: raw.last_fix, branch: String(raw.branch || ''), version: String(raw.version || '') };
      seen.add(rig.id);
      var entry = markers.get(rig.id);
      if (!entry) {
        entry = { rig: rig, marker: L.marker([rig.lat, rig.lon], { icon: icon(rig.status, rig.last_fix), title: rig.id, alt: rig.id, keyboard: true }) };
        entry.marker.bindPopup(popupFor(entry));
        markers.set(rig.id, entry);
        added.push(entry.marker);
        return;
      }
      var old = entry.rig;
      entry.rig = rig;
      if (old.lat !== rig.lat || old.lon !== rig.lon) {
        // markercluster's way to move a marker: out of the group, move, back in.
        cluster.removeLayer(entry.marker);
        entry.marker.setLatLng([rig.lat, rig.lon]);
        added.push(entry.marker);
      }
      if (old.status !== rig.status || Boolean(old.last_fix) !== Boolean(rig.last_fix)) {
        entry.marker.setIcon(icon(rig.status, rig.last_fix));
        if (cluster.hasLayer(entry.marker)) cluster.refreshClusters(entry.marker);
      }
    });
    markers.forEach(function (entry, id) {
      if (!seen.has(id)) {
        removed.push(entry.marker);
        markers.delete(id);
      }
    });
    if (removed.length) cluster.removeLayers(removed);
    state.total = markers.size;
    state.rigs = markers.size;
    if (countEl) countEl.textContent = '(' + markers.size + (markers.size === 1 ? ' rig)' : ' rigs)');
    return added;
  }

  /** The markers, revalidated with their ETag: an unchanged fleet costs a 304, not the whole list. */
  function load() {
    return fetch(rigsUrl, { credentials: 'same-origin', cache: 'no-cache', headers: { accept: 'application/json' } })
      .then(function (res) {
        if (!res.ok) throw new Error('rigs.json answered ' + res.status);
        return res.json();
      })
      .then(function (body) {
        var first = state.loads === 0;
        state.loads += 1;
        var rigs = body && body.data && Array.isArray(body.data.rigs) ? body.data.rigs : [];
        var added = apply(rigs);
        if (first) {
          var points = [];
          markers.forEach(function (entry) {
            points.push([entry.rig.lat, entry.rig.lon]);
          });
          if (points.length) map.fitBounds(points, { padding: [30, 30], maxZoom: 12, animate: false });
          if (!added.length) {
            state.done = true;
            state.firstRenderMs = performance.now();
          }
        }
        if (added.length) cluster.addLayers(added);
        state.error = null;
      })
      .catch(function (err) {
        state.error = String(err && err.message ? err.message : err);
      });
  }

  window.rigdMap = { map: map, cluster: cluster, state: state, markers: markers, reload: load };

  /** A first load that failed (a network blip, a restart) is tried again soon, 2 s and doubling up
   * to the refresh interval: a page opened meanwhile is not left empty for a whole interval. */
  var retryMs = 2000;
  function firstLoad() {
    load().then(function () {
      if (state.loads > 0) {
        setInterval(load, refreshS * 1000);
        return;
      }
      setTimeout(firstLoad, retryMs);
      retryMs = Math.min(retryMs * 2, refreshS * 1000);
    });
  }
  firstLoad();
})();
