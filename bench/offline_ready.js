/* How long a cold phone needs to become offline-ready at 1 Mbit/s: Chromium's own network emulation
   (Network.emulateNetworkConditions over CDP) on the page AND on the service worker, which the page's
   emulation does not cover. Every target is paused when it starts (waitForDebuggerOnStart), throttled, then
   resumed, so the worker's precache runs throttled from its first request.
   Usage: node --experimental-websocket bench/offline_ready.js http://127.0.0.1:PORT [kbit/s] [latency ms] */
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const base = process.argv[2];
const kbit = Number(process.argv[3] || 1000);
const latency = Number(process.argv[4] || 150);
const bytesPerSecond = (kbit * 1000) / 8;
const conditions = { offline: false, latency, downloadThroughput: bytesPerSecond, uploadThroughput: bytesPerSecond };

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "judgeapp-cdp-"));
  const port = 9400 + Math.floor(Math.random() * 500);
  const chrome = spawn(process.env.CHROMIUM_PATH || "/usr/bin/chromium", [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", `--remote-debugging-port=${port}`,
    `--user-data-dir=${profile}`, "--no-first-run", "--window-size=390,844", "about:blank"], { stdio: "ignore" });
  let version;
  for (let i = 0; i < 100 && !version; i++) {
    try { version = await (await fetch(`http://127.0.0.1:${port}/json/version`)).json(); }
    catch (e) { await new Promise((r) => setTimeout(r, 100)); }
  }
  const ws = new WebSocket(version.webSocketDebuggerUrl);
  await new Promise((r) => ws.addEventListener("open", r));
  let nextId = 0;
  const pending = new Map();
  const sessions = {};
  const throttled = [];
  const send = (method, params = {}, sessionId) => {
    const msg = { id: ++nextId, method, params };
    if (sessionId) msg.sessionId = sessionId;
    ws.send(JSON.stringify(msg));
    return new Promise((resolve, reject) => pending.set(msg.id, { resolve, reject }));
  };
  ws.addEventListener("message", async (ev) => {
    const m = JSON.parse(ev.data);
    if (m.id && pending.has(m.id)) {
      const p = pending.get(m.id); pending.delete(m.id);
      m.error ? p.reject(new Error(JSON.stringify(m.error))) : p.resolve(m.result);
      return;
    }
    if (m.method === "Target.attachedToTarget") {
      const sid = m.params.sessionId, info = m.params.targetInfo;
      sessions[info.targetId] = sid;
      try {
        await send("Network.enable", {}, sid);
        await send("Network.emulateNetworkConditions", conditions, sid);
        throttled.push(info.type);
      } catch (e) { /* a target without the Network domain */ }
      await send("Runtime.runIfWaitingForDebugger", {}, sid).catch(() => {});
    }
  });
  await send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  while (!sessions[targetId]) await new Promise((r) => setTimeout(r, 20));
  const page = sessions[targetId];
  await send("Emulation.setDeviceMetricsOverride", { width: 390, height: 844, deviceScaleFactor: 3, mobile: true }, page);
  const t0 = Date.now();
  await send("Page.enable", {}, page);
  await send("Page.navigate", { url: base + "/" }, page);
  let usable = null, ready = null;
  while (!ready && Date.now() - t0 < 600000) {
    const r = await send("Runtime.evaluate", { expression:
      "(async () => ({load: document.readyState === 'complete' && !!document.querySelector('main'), " +
      "ready: !!(window.caches && await caches.match('/offline/ready'))}))()", awaitPromise: true, returnByValue: true }, page);
    const v = r.result.value || {};
    if (v.load && usable === null) usable = (Date.now() - t0) / 1000;
    if (v.ready) ready = (Date.now() - t0) / 1000;
    else await new Promise((r) => setTimeout(r, 250));
  }
  console.log(JSON.stringify({ kbit, latency, usable_s: usable, offline_ready_s: ready, throttled }));
  ws.close();
  chrome.kill();
  fs.rmSync(profile, { recursive: true, force: true });
}
main().catch((e) => { console.error(e); process.exit(1); });
