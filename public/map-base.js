/* What the fleet map and a rig's track share: the base layer (tiles from page.map_tiles_url, or a
 * graticule drawn here when there are none, so the map needs no network) and a scale. Plain script,
 * no build step; Leaflet (L) is loaded before it. */
(function () {
  'use strict';

  /** Grid spacings in degrees, widest first. */
  var STEPS = [30, 20, 10, 5, 2, 1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002, 0.0001];

  /** The widest spacing that still draws a few lines across the view. */
  function stepFor(bounds) {
    var span = Math.max(bounds.getEast() - bounds.getWest(), (bounds.getNorth() - bounds.getSouth()) * 1.5);
    for (var i = 0; i < STEPS.length; i++) {
      if (span / STEPS[i] >= 4) return STEPS[i];
    }
    return STEPS[STEPS.length - 1];
  }

  /** Lines of latitude and longitude every N degrees (N by zoom), redrawn for the view after each move. The map's view must be set first. */
  function graticule(map) {
    var layer = L.layerGroup().addTo(map);
    var style = { color: '#9fb0c2', weight: 1, opacity: 0.8, interactive: false, className: 'graticule-line' };
    var equator = { color: '#7d93aa', weight: 1.5, opacity: 0.9, interactive: false, className: 'graticule-line' };
    function draw() {
      layer.clearLayers();
      var b = map.getBounds();
      var step = stepFor(b);
      var south = Math.max(b.getSouth(), -85);
      var north = Math.min(b.getNorth(), 85);
      var west = b.getWest();
      var east = b.getEast();
      var lat, lon;
      for (lat = Math.ceil(south / step) * step; lat <= north; lat += step) {
        layer.addLayer(L.polyline([[lat, west], [lat, east]], Math.abs(lat) < step / 2 ? equator : style));
      }
      for (lon = Math.ceil(west / step) * step; lon <= east; lon += step) {
        layer.addLayer(L.polyline([[south, lon], [north, lon]], Math.abs(lon % 360) < step / 2 ? equator : style));
      }
    }
    map.on('moveend', draw);
    map.whenReady(draw);
    return layer;
  }

  /** Tiles when a template is configured, else the graticule; always a metric scale. */
  function baseLayer(map, tilesUrl) {
    if (tilesUrl) {
      L.tileLayer(tilesUrl, { maxZoom: 19, subdomains: 'abc', crossOrigin: false }).addTo(map);
    } else {
      graticule(map);
    }
    L.control.scale({ imperial: false }).addTo(map);
  }

  /** "5 minutes ago", like the pages' server-side words. */
  function timeAgo(iso, now) {
    var s = Math.round((now - new Date(iso).getTime()) / 1000);
    if (!isFinite(s)) return '';
    if (s < 60) return 'less than a minute ago';
    var m = Math.round(s / 60);
    if (m < 60) return m === 1 ? '1 minute ago' : m + ' minutes ago';
    var h = Math.round(m / 60);
    if (h < 24) return h === 1 ? 'about 1 hour ago' : 'about ' + h + ' hours ago';
    var d = Math.round(h / 24);
    return d === 1 ? '1 day ago' : d + ' days ago';
  }

  window.rigdMapBase = { baseLayer: baseLayer, timeAgo: timeAgo, stepFor: stepFor };
})();
