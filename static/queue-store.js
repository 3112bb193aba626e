/* The record queue as the service worker sees it: a copy of the page's queue (localStorage) in IndexedDB,
   and what the worker did with each record when it sent them on Background Sync with no page open
   ({key: {state: "sent" | "refused", reason}}), which the next page applies to its queue.
   Loaded by the pages (app.js) and by the worker (importScripts). */
(function (g) {
  "use strict";
  function open() {
    return new Promise(function (resolve, reject) {
      var r = indexedDB.open("judgeapp", 1);
      r.onupgradeneeded = function () { r.result.createObjectStore("kv"); };
      r.onsuccess = function () { resolve(r.result); };
      r.onerror = function () { reject(r.error); };
    });
  }
  function get(key) {
    return open().then(function (db) {
      return new Promise(function (resolve, reject) {
        var req = db.transaction("kv", "readonly").objectStore("kv").get(key);
        req.onsuccess = function () { db.close(); resolve(req.result); };
        req.onerror = function () { db.close(); reject(req.error); };
      });
    });
  }
  function set(key, value) {
    return open().then(function (db) {
      return new Promise(function (resolve, reject) {
        var t = db.transaction("kv", "readwrite");
        t.objectStore("kv").put(value, key);
        t.oncomplete = function () { db.close(); resolve(); };
        t.onerror = function () { db.close(); reject(t.error); };
      });
    });
  }
  g.judgeappStore = { get: get, set: set };
})(self);
