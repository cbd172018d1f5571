// Only here so that the test can read the extension id from the worker's URL.
self.addEventListener('install', () => self.skipWaiting());
