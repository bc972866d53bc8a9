/* The track on a rig's page: its positions over the last 24 hours as a line, the current position
 * as a marker, on tiles or the graticule (see map-base.js). Data comes from data-track, a JSON
 * array of [lat, lon] pairs the server wrote. */
(function () {
  'use strict';
  var el = document.getElementById('track');
  if (!el) return;
  var points;
  try {
    points = JSON.parse(el.getAttribute('data-track') || '[]');
  } catch (e) {
    points = [];
  }
  points = points.filter(function (p) {
    return Array.isArray(p) && isFinite(p[0]) && isFinite(p[1]) && Math.abs(p[0]) <= 90 && Math.abs(p[1]) <= 180;
  });
  if (!points.length) return;
  var map = L.map(el, { minZoom: 1, maxZoom: 18, scrollWheelZoom: false });
  var last = points[points.length - 1];
  // The view first: layers added before it wait for the map's load, in the order they were added.
  if (points.length > 1) map.fitBounds(L.latLngBounds(points), { padding: [20, 20], maxZoom: 15, animate: false });
  else map.setView(last, 12, { animate: false });
  window.rigdMapBase.baseLayer(map, el.getAttribute('data-tiles') || '');
  var status = el.getAttribute('data-status');
  var line = L.polyline(points, { className: 'rig-track', weight: 3, opacity: 0.85 }).addTo(map);
  L.marker(last, {
    icon: L.divIcon({ className: 'rig-marker dot dot-' + (/^(online|stale|offline)$/.test(status) ? status : 'offline'), iconSize: [14, 14], iconAnchor: [7, 7], html: '' }),
    keyboard: false,
  }).addTo(map);
  window.rigdTrack = { map: map, line: line, points: points.length };
})();
