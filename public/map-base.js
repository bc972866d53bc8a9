/* What the fleet map and a rig's track share: the base layer (tiles from page.map_tiles_url, or,
 * when there are none, the countries of Natural Earth served by rigd with a graticule over them, so
 * the map needs no network) and a scale. Plain script, no build step; Leaflet (L) is loaded before
 * it, and topojson-client (topojson) too when there are no tiles. */
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

  /** Where rigd serves the countries (TopoJSON, world-atlas 110m). */
  var WORLD_URL = '/assets/world/countries-110m.json';

  /** What the land layer did, for whoever watches the page: countries drawn, or the error. */
  var land = { done: false, countries: 0, error: null };

  /**
   * A ring that crosses the antimeridian (Russia, Fiji) jumps from 180 to -180 in the data; drawn
   * as is, it streaks across the whole map. Each point is moved by 360 degrees to stay next to the
   * one before it, so the shape simply continues past 180.
   */
  function unwrapRing(ring) {
    var out = [];
    var shift = 0;
    for (var i = 0; i < ring.length; i++) {
      if (i > 0) {
        var step = ring[i][0] + shift - out[i - 1][0];
        if (step > 180) shift -= 360;
        else if (step < -180) shift += 360;
      }
      out.push([ring[i][0] + shift, ring[i][1]]);
    }
    return out;
  }

  function unwrap(geometry) {
    if (geometry.type === 'Polygon') geometry.coordinates = geometry.coordinates.map(unwrapRing);
    else if (geometry.type === 'MultiPolygon') geometry.coordinates = geometry.coordinates.map(function (p) { return p.map(unwrapRing); });
  }

  /**
   * Countries and coastlines as a GeoJSON layer in a pane of its own, under the graticule, the
   * track and the markers; not interactive (clicks go to the markers).
   */
  function countries(map) {
    map.createPane('land');
    map.getPane('land').style.zIndex = 350;
    map.getPane('land').style.pointerEvents = 'none';
    return fetch(WORLD_URL, { credentials: 'same-origin' })
      .then(function (res) {
        if (!res.ok) throw new Error(WORLD_URL + ' answered ' + res.status);
        return res.json();
      })
      .then(function (topo) {
        var shapes = topojson.feature(topo, topo.objects.countries);
        shapes.features.forEach(function (f) {
          if (f.geometry) unwrap(f.geometry);
        });
        L.geoJSON(shapes, {
          pane: 'land',
          interactive: false,
          style: { color: '#7c8a99', weight: 0.8, opacity: 1, fillColor: '#f3f1e6', fillOpacity: 1, className: 'land' },
        }).addTo(map);
        land.countries = shapes.features.length;
        land.done = true;
      })
      .catch(function (err) {
        land.error = String(err && err.message ? err.message : err);
        land.done = true;
      });
  }

  /** Tiles when a template is configured, else the countries and the graticule; always a metric scale. */
  function baseLayer(map, tilesUrl) {
    if (tilesUrl) {
      L.tileLayer(tilesUrl, { maxZoom: 19, subdomains: 'abc', crossOrigin: false }).addTo(map);
    } else {
      countries(map);
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

  window.rigdMapBase = { baseLayer: baseLayer, timeAgo: timeAgo, stepFor: stepFor, land: land };
})();
