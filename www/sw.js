// Service worker of the built site (scripts/build-site.sh fills in VERSION
// and ASSETS; the development page in www/ does not register it). It makes
// the page work offline once loaded: every asset is cached at install, served
// from the cache afterwards (their paths carry the content hash, so a cached
// asset is never stale), and the page itself is fetched from the network
// first, falling back to the cache when offline.

const VERSION = "__VERSION__";
const ASSETS = __ASSETS__;
const CACHE = `fabricscope-${VERSION}`;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(["./", ...ASSETS])).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k.startsWith("fabricscope-") && k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).then((response) => {
      const copy = response.clone();
      if (response.ok) caches.open(CACHE).then((cache) => cache.put("./", copy));
      return response;
    }).catch(() => caches.match("./")));
    return;
  }
  event.respondWith(caches.match(request).then((hit) => hit ?? fetch(request)));
});
