// baton.js: the script of baton's pages. One file, no framework, no build
// step, loaded with <script src="/static/baton.js" defer> and no inline
// script anywhere. The server renders every page whole (the job page reads
// as a snapshot without this script); the script adds live updates, time
// travel, selection, pan and zoom, filters, and the validation of /new.
//
// Rules it keeps (docs/pages.md has the DOM contract it relies on):
//   - Every string from a job (IDs, paths, actions, payloads, outputs,
//     errors) is set with textContent or setAttribute, never as markup.
//     SVG and HTML fragments made by the server (which escapes them) are
//     parsed with DOMParser and imported.
//   - A live update touches only the nodes that changed: the selection,
//     the scroll position, the zoom, the expanded groups and an open panel
//     stay as they were.
//   - Once the page is drawn it calls performance.mark('baton:drawn') and
//     sets window.batonDrawn = true; after each live patch it sets the
//     version shown in #job's and <body>'s data-version.
'use strict';

(() => {
  // ---------------------------------------------------------------------
  // The drawing's states, as package draw writes them (draw/style.go).

  const STYLES = {
    idle: { fill: '#FFFFFF', stroke: '#767676', text: '#1A1A1A', icon: '○' },
    running: { fill: '#0072B2', stroke: '#0072B2', text: '#FFFFFF', icon: '▶' },
    succeeded: { fill: '#009E73', stroke: '#007A59', text: '#000000', icon: '✓' },
    failed: { fill: '#D55E00', stroke: '#A84A00', text: '#000000', icon: '✗' },
    cancelled: { fill: '#8C8C8C', stroke: '#6E6E6E', text: '#000000', icon: '⊘' },
    skipped: { fill: '#F0E442', stroke: '#8F8727', text: '#000000', icon: '↷' },
  };
  const UNKNOWN_STYLE = { fill: '#FFFFFF', stroke: '#000000', text: '#000000', icon: '?' };
  const PAYLOAD_CHARS = 40;
  const ERROR_CHARS = 60;
  // CLIP is how much of a value the panel shows before "show all".
  const CLIP = 200;
  const SVG_NS = 'http://www.w3.org/2000/svg';

  // clip returns s on one line (control characters as spaces), cut to at
  // most max characters, the last of which is "…" when it was cut: draw's
  // clip.
  function clip(s, max) {
    const chars = Array.from(String(s).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' '));
    if (chars.length <= max) return chars.join('');
    return chars.slice(0, max - 1).join('') + '…';
  }

  function showPath(p) { return p === '' ? 'root' : p; }

  // parentPath returns the path of p's parent; null for the root.
  function parentPath(p) {
    if (p === '') return null;
    const i = p.lastIndexOf('.');
    return i < 0 ? '' : p.slice(0, i);
  }

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const k of kids) {
      if (k === null || k === undefined || k === false) continue;
      e.append(typeof k === 'string' ? document.createTextNode(k) : k);
    }
    return e;
  }

  // ---------------------------------------------------------------------
  // Talking to the server.

  // HTTPError is an answer that is not a success.
  class HTTPError extends Error {
    constructor(status, problem) {
      super((problem && (problem.detail || problem.title)) || 'HTTP ' + status);
      this.status = status;
      this.problem = problem;
    }
  }
  // NetError is a request that got no answer: the server is gone.
  class NetError extends Error {}

  // request fetches url with the page's cookie; it returns the response of
  // a success, and throws HTTPError (401: the login expired, said in the
  // banner) or NetError.
  async function request(url, opts) {
    let r;
    try {
      r = await fetch(url, Object.assign({ credentials: 'same-origin', cache: 'no-store' }, opts));
    } catch (e) {
      if (e && e.name === 'AbortError') throw e;
      throw new NetError(String(e && e.message || e));
    }
    if (r.ok) return r;
    let problem = null;
    try { problem = await r.json(); } catch (e) { problem = null; }
    if (r.status === 401) loginExpired();
    throw new HTTPError(r.status, problem);
  }

  async function getJSON(url, opts) { return (await request(url, Object.assign({ headers: { Accept: 'application/json' } }, opts))).json(); }
  async function getText(url, opts) { return (await request(url, opts)).text(); }

  function parseSVG(text) {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const root = doc.documentElement;
    if (!root || root.namespaceURI !== SVG_NS || root.localName !== 'svg') throw new Error('not an SVG drawing');
    return root;
  }

  function parseHTML(text) { return new DOMParser().parseFromString(text, 'text/html'); }

  // ---------------------------------------------------------------------
  // The banner: what the page says about its connection.

  const banner = document.getElementById('banner');
  let loginGone = false;

  function say(text, link) {
    if (!banner) return;
    const kids = [text];
    if (link) kids.push(' ', el('a', { href: link.href }, link.text));
    banner.replaceChildren(...kids);
    banner.hidden = false;
  }

  function unsay() {
    if (!banner || loginGone) return;
    banner.hidden = true;
    banner.replaceChildren();
  }

  function loginExpired() {
    loginGone = true;
    say('Your login has expired: what is shown stays as it was, without new changes.',
      { href: '/login?next=' + encodeURIComponent(location.pathname + location.search), text: 'Log in again' });
  }

  function loginBack() {
    if (!loginGone) return;
    loginGone = false;
    unsay();
  }

  // ---------------------------------------------------------------------
  // Durations that tick: <time data-start=RFC3339> without data-end.

  function fmtDuration(ms) {
    if (!(ms >= 0)) ms = 0;
    const s = Math.floor(ms / 1000);
    if (s < 60) return s + 's';
    const m = Math.floor(s / 60);
    if (m < 60) return m + 'm ' + String(s % 60).padStart(2, '0') + 's';
    const h = Math.floor(m / 60);
    if (h < 48) return h + 'h ' + String(m % 60).padStart(2, '0') + 'm';
    return Math.floor(h / 24) + 'd ' + String(h % 24).padStart(2, '0') + 'h';
  }

  function tick() {
    const now = Date.now();
    for (const t of document.querySelectorAll('time[data-start]:not([data-end])')) {
      const start = Date.parse(t.dataset.start);
      if (Number.isNaN(start)) continue;
      const text = fmtDuration(now - start);
      if (t.textContent !== text) t.textContent = text;
    }
  }

  function startTicking() {
    if (!document.querySelector('time[data-start]')) return;
    tick();
    setInterval(tick, 1000);
  }

  function drawn() {
    if (window.batonDrawn) return;
    try { performance.mark('baton:drawn'); } catch (e) { /* old browsers */ }
    window.batonDrawn = true;
  }

  // throttle returns a function that runs f at most once every ms; a call
  // while f waits or runs makes it run once more after (trailing).
  function throttle(f, ms) {
    let timer = null;
    let running = false;
    let pending = false;
    let last = -Infinity;
    const fire = async () => {
      timer = null;
      running = true;
      pending = false;
      last = Date.now();
      try { await f(); } catch (e) { /* the next call tries again */ }
      running = false;
      if (pending) schedule();
    };
    const schedule = () => {
      if (timer !== null) return;
      if (running) { pending = true; return; }
      timer = setTimeout(fire, Math.max(0, last + ms - Date.now()));
    };
    return schedule;
  }

  // =====================================================================
  // The job page.

  function jobPage(main) {
    const id = main.dataset.job;
    const jobPath = '/jobs/' + encodeURIComponent(id);
    const apiPath = '/api/v1/jobs/' + encodeURIComponent(id);
    const treeBox = document.getElementById('tree');
    const panel = document.getElementById('panel');
    const stepsList = document.getElementById('steps');
    const header = document.getElementById('job-header');
    const url0 = new URL(location.href);

    // What the page knows of the job now (the live job), and what it shows.
    const st = {
      latest: Number(main.dataset.version) || 0, // the newest version the page knows
      status: main.dataset.status || '', // the live job's status
      summary: null, // the newest summary or step data
      viewing: url0.searchParams.has('version') ? Number(url0.searchParams.get('version')) : null, // a past version shown, or null: live
      shown: Number(main.dataset.version) || 0, // the version the tree shows
      nodes: new Map(), // path -> {node, v}: the newest state the page got of a node, and its version
      selected: url0.searchParams.has('node') ? url0.searchParams.get('node') : null,
      expanded: new Set(),
      zoom: 1,
      travel: 0, // a counter: only the newest travel's answers count
    };
    if (st.viewing !== null && !(st.viewing > 0)) st.viewing = null;

    // ---- the tree: index, states, selection --------------------------

    let svg = null;
    let nodeEls = new Map(); // path -> <g class="node">
    let kids = new Map(); // path -> [child paths drawn], in drawing order

    function index() {
      svg = treeBox ? treeBox.querySelector('svg') : null;
      nodeEls = new Map();
      kids = new Map();
      if (!svg) return;
      for (const g of svg.querySelectorAll('g.node[data-path]')) {
        const p = g.getAttribute('data-path');
        nodeEls.set(p, g);
        g.setAttribute('tabindex', '-1');
        const up = parentPath(p);
        if (up !== null) {
          if (!kids.has(up)) kids.set(up, []);
          kids.get(up).push(p);
        }
      }
      const first = nodeEls.get(st.selected) || nodeEls.get('') || nodeEls.values().next().value;
      if (first) first.setAttribute('tabindex', '0');
      if (svg.getAttribute('role') === 'img') svg.setAttribute('role', 'group');
      applyZoom();
    }

    // drawnAncestor returns the nearest drawn node at or above path p.
    function drawnAncestor(p) {
      for (let q = p; q !== null; q = parentPath(q)) {
        const g = nodeEls.get(q);
        if (g) return g;
      }
      return null;
    }

    function bandLine(n) {
      const s = STYLES[n.status] || UNKNOWN_STYLE;
      let l = s.icon + ' ' + n.status;
      if (n.attempt > 1) l += ' #' + n.attempt;
      if (n.status === 'failed' && n.error) l += ': ' + clip(n.error, ERROR_CHARS);
      return clip(l, PAYLOAD_CHARS);
    }

    function tooltip(n, old) {
      let t = showPath(n.path);
      if (n.name) t += ' (' + n.name + ')';
      t += ': ' + n.status;
      if (n.attempt > 1) t += ', attempt ' + n.attempt;
      if (n.status === 'failed' && n.error) t += ': ' + clip(n.error, ERROR_CHARS);
      const budget = '; closed to stay within the bound on boxes';
      if (old && old.endsWith(budget)) t += budget;
      return t;
    }

    // paint sets a drawn node's state as draw would have drawn it: its
    // data-status, the band's colour, the box's outline, the state's
    // icon and words, the tooltip. It changes nothing when they are equal.
    function paint(g, n) {
      const line = bandLine(n);
      const state = g.querySelector('text.state');
      if (g.getAttribute('data-status') === n.status && (!state || state.textContent === line)) return false;
      const s = STYLES[n.status] || UNKNOWN_STYLE;
      g.setAttribute('data-status', n.status);
      const band = g.querySelector('rect.band');
      if (band) {
        band.setAttribute('class', 'band band-' + n.status);
        band.setAttribute('fill', s.fill);
        band.setAttribute('stroke', s.stroke);
      }
      const box = g.querySelector('rect.box');
      if (box) box.setAttribute('stroke', s.stroke);
      if (state) {
        state.textContent = line;
        state.setAttribute('fill', s.text);
      }
      const title = g.querySelector('title');
      if (title) title.textContent = tooltip(n, title.textContent);
      return true;
    }

    // copyState sets the state of drawn node g as drawn node f of a
    // fragment of the same tree shows it (groups' counts included).
    function copyState(g, f) {
      const same = (sel) => {
        const a = g.querySelector(sel);
        const b = f.querySelector(sel);
        return (a ? a.textContent : null) === (b ? b.textContent : null);
      };
      const countsOf = (x) => Array.from(x.querySelectorAll('text.count'), (c) => c.textContent).join('|');
      if (g.getAttribute('data-status') === f.getAttribute('data-status') && same('text.state') && countsOf(g) === countsOf(f)) return;
      g.setAttribute('data-status', f.getAttribute('data-status'));
      for (const sel of ['rect.band', 'rect.box', 'text.state', 'title']) {
        const a = g.querySelector(sel);
        const b = f.querySelector(sel);
        if (!a || !b) continue;
        for (const name of ['class', 'fill', 'stroke']) {
          if (b.hasAttribute(name)) a.setAttribute(name, b.getAttribute(name));
        }
        if (sel !== 'rect.band' && sel !== 'rect.box') a.textContent = b.textContent;
      }
      const old = g.querySelectorAll('text.count');
      const fresh = f.querySelectorAll('text.count');
      if (old.length === fresh.length) {
        old.forEach((c, i) => {
          c.textContent = fresh[i].textContent;
          for (const name of ['data-status', 'data-count']) c.setAttribute(name, fresh[i].getAttribute(name));
        });
      } else {
        old.forEach((c) => c.remove());
        const before = g.querySelector('text.state');
        for (const c of fresh) g.insertBefore(document.importNode(c, true), before);
      }
    }

    // patchFrom sets every drawn node's state from a fragment of the
    // same tree (same expansions). It returns false when the fragment's
    // shape differs (then the caller swaps the drawing).
    function patchFrom(frag) {
      const fs = frag.querySelectorAll('g.node[data-path]');
      if (fs.length !== nodeEls.size) return false;
      for (const f of fs) {
        if (!nodeEls.has(f.getAttribute('data-path'))) return false;
      }
      for (const f of fs) copyState(nodeEls.get(f.getAttribute('data-path')), f);
      for (const name of ['data-version', 'data-status']) {
        if (frag.hasAttribute(name)) svg.setAttribute(name, frag.getAttribute(name));
      }
      const t0 = svg.querySelector(':scope > title');
      const t1 = frag.querySelector(':scope > title');
      if (t0 && t1) t0.textContent = t1.textContent;
      const h0 = svg.querySelector(':scope > text.title');
      const h1 = frag.querySelector(':scope > text.title');
      if (h0 && h1) h0.textContent = h1.textContent;
      return true;
    }

    // swap puts a new drawing in place of the old one, keeping the zoom,
    // the scroll position and the selection.
    function swap(frag) {
      const fresh = document.importNode(frag, true);
      const left = treeBox.scrollLeft;
      const top = treeBox.scrollTop;
      if (svg) svg.replaceWith(fresh); else treeBox.append(fresh);
      index();
      treeBox.scrollLeft = left;
      treeBox.scrollTop = top;
      markSelected();
    }

    // reapply paints what the page got of the live job after version v
    // (a fragment of version v was just applied).
    function reapply(v) {
      for (const [p, { node, v: at }] of st.nodes) {
        if (at <= v) continue;
        const g = nodeEls.get(p);
        if (g) paint(g, node); else staleGroups();
      }
    }

    function setShown(v) {
      st.shown = v;
      main.setAttribute('data-version', String(v));
      document.body.setAttribute('data-version', String(v));
    }

    // fragment fetches the drawing at version v (null: the newest) with
    // the groups the page has opened.
    async function fragment(v) {
      const q = new URLSearchParams();
      if (v !== null) q.set('version', String(v));
      if (st.expanded.size) q.set('expand', Array.from(st.expanded).join(','));
      const qs = q.toString();
      return parseSVG(await getText(jobPath + '/tree.svg' + (qs ? '?' + qs : '')));
    }

    // redraw brings the drawing to version v (null: live) by a fragment:
    // patched in place when the shape is the same, else swapped.
    async function redraw(v) {
      if (!treeBox) return;
      const ticket = ++st.travel;
      const frag = await fragment(v);
      if (ticket !== st.travel) return;
      if (!svg || !patchFrom(frag)) swap(frag);
      const fv = Number(frag.getAttribute('data-version')) || 0;
      if (v === null) {
        reapply(fv);
        setShown(Math.max(fv, st.latest));
      } else {
        setShown(fv || v);
      }
    }

    // Groups whose counts changed are brought up to date by a fragment,
    // at most once a second.
    const staleGroups = throttle(async () => {
      if (st.viewing !== null || !svg || !svg.querySelector('g.node.group')) return;
      try {
        const ticket = st.travel;
        const frag = await fragment(null);
        if (ticket !== st.travel || st.viewing !== null) return;
        if (!patchFrom(frag)) swap(frag);
        reapply(Number(frag.getAttribute('data-version')) || 0);
      } catch (e) { /* the next change tries again */ }
    }, 1000);

    // ---- selection and the panel ---------------------------------------

    function markSelected() {
      for (const g of (svg ? svg.querySelectorAll('g.node.selected') : [])) {
        g.classList.remove('selected');
        g.removeAttribute('aria-current');
        const box = g.querySelector('rect.box');
        if (box) box.setAttribute('stroke-width', '1.5');
      }
      const g = st.selected === null ? null : nodeEls.get(st.selected);
      if (!g) return;
      g.classList.add('selected');
      g.setAttribute('aria-current', 'true');
      const box = g.querySelector('rect.box');
      if (box) box.setAttribute('stroke-width', '3');
      for (const o of svg.querySelectorAll('g.node[tabindex="0"]')) o.setAttribute('tabindex', '-1');
      g.setAttribute('tabindex', '0');
    }

    function setURL(changes, hash) {
      const u = new URL(location.href);
      for (const [k, v] of Object.entries(changes)) {
        if (v === null || v === undefined) u.searchParams.delete(k); else u.searchParams.set(k, String(v));
      }
      if (hash !== undefined) u.hash = hash || '';
      history.replaceState(history.state, '', u.pathname + u.search + u.hash);
    }

    let panelTicket = 0;

    function select(p, opts) {
      st.selected = p;
      markSelected();
      setURL({ node: p });
      if (opts && opts.scroll) {
        const g = nodeEls.get(p);
        if (g && g.scrollIntoView) g.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      }
      fillPanel();
    }

    function deselect() {
      st.selected = null;
      markSelected();
      setURL({ node: null });
      if (panel) {
        panel.replaceChildren();
        panel.hidden = true;
      }
    }

    // fillPanel shows the selected node: from what the live stream
    // carried, else from the node route at the version shown.
    async function fillPanel(full) {
      if (!panel || st.selected === null) return;
      const p = st.selected;
      const ticket = ++panelTicket;
      const known = st.viewing === null ? st.nodes.get(p) : null;
      if (known && !full) {
        renderPanel(known.node, false);
        return;
      }
      if (!panel.querySelector('[data-node-path]') || panel.querySelector('[data-node-path]').getAttribute('data-node-path') !== p) {
        const g = nodeEls.get(p);
        renderPanel({ path: p, kind: g ? g.getAttribute('data-kind') : '', status: g ? g.getAttribute('data-status') : '' }, false, true);
      }
      const q = new URLSearchParams({ path: p });
      if (st.viewing !== null) q.set('version', String(st.viewing));
      try {
        const n = await getJSON(apiPath + '/node?' + q);
        if (ticket !== panelTicket || st.selected !== p) return;
        renderPanel(n, true);
      } catch (e) {
        if (ticket !== panelTicket) return;
        const note = panel.querySelector('.panel-note');
        if (note) note.textContent = 'Could not read this node: ' + e.message;
      }
    }

    // renderPanel fills #panel with node n; full says its values are whole
    // (up to the server's 1 MiB), else clipped.
    function renderPanel(n, full, loading) {
      panel.hidden = false;
      const dl = el('dl', null);
      const row = (name, value, cls) => {
        if (value === undefined || value === null || value === '') return;
        dl.append(el('dt', null, name), el('dd', cls ? { class: cls } : null, String(value)));
      };
      row('path', showPath(n.path));
      row('kind', n.kind);
      row('action', n.action);
      row('name', n.name);
      row('status', n.status, 'status');
      if (n.attempt) row('attempts', n.attempt);
      if (n.retry) row('retry at', n.retry);
      let clipped = false;
      for (const f of ['payload', 'output', 'error']) {
        const v = n[f];
        if (v === undefined || v === '') continue;
        const chars = Array.from(v);
        const long = chars.length > CLIP;
        const shown = long ? chars.slice(0, CLIP).join('') + '…' : v;
        const pre = el('pre', { class: 'value', 'data-field': f }, shown);
        const dd = el('dd', null, pre);
        if (long) {
          clipped = true;
          const more = el('button', { type: 'button', class: 'show-all' }, 'show all (' + chars.length + ' characters)');
          more.addEventListener('click', () => { pre.textContent = v; more.remove(); });
          dd.append(more);
        }
        dl.append(el('dt', null, f), dd);
      }
      if (n.failure) row('failure', showPath(n.failure.path) + ': ' + n.failure.message);
      if (n.clipped && !full) clipped = true;
      const kidsOf = [el('h2', { 'data-node-path': n.path }, showPath(n.path)), dl];
      if (n.clipped && !full) {
        const more = el('a', { href: apiPath + '/node?' + new URLSearchParams({ path: n.path }), class: 'show-all' }, 'show all');
        more.addEventListener('click', (ev) => { ev.preventDefault(); fillPanel(true); });
        kidsOf.push(more);
      } else if (n.clipped && full) {
        kidsOf.push(el('p', { class: 'panel-note' }, 'Values longer than 1 MiB are cut there by the server.'));
      }
      const steps = stepsOf(n.path);
      if (steps.length) {
        const ul = el('ul', { class: 'node-steps' });
        for (const v of steps) {
          const a = el('a', { href: '#step-' + v }, 'v' + v);
          ul.append(el('li', null, a));
        }
        kidsOf.push(el('p', null, 'Steps of this node:'), ul);
      }
      if (st.expanded.has(n.path)) {
        const b = el('button', { type: 'button', class: 'collapse' }, 'Close this group');
        b.addEventListener('click', () => collapse(n.path));
        kidsOf.push(b);
      }
      if (loading) kidsOf.push(el('p', { class: 'panel-note' }, 'Reading…'));
      const close = el('button', { type: 'button', class: 'close', 'aria-label': 'Close the details' }, '×');
      close.addEventListener('click', deselect);
      panel.replaceChildren(close, ...kidsOf);
      void clipped;
    }

    // stepsOf lists the versions of the steps that name path p.
    function stepsOf(p) {
      if (!stepsList) return [];
      const out = [];
      for (const li of stepsList.children) {
        const paths = (li.getAttribute('data-paths') || '').split(' ');
        if (paths.includes(p === '' ? 'root' : p)) out.push(Number(li.dataset.version));
      }
      return out.slice(-20);
    }

    // ---- groups --------------------------------------------------------

    async function expand(p) {
      st.expanded.add(p);
      try {
        await redraw(st.viewing);
      } catch (e) {
        st.expanded.delete(p);
        say('Could not open the group: ' + e.message);
      }
    }

    async function collapse(p) {
      for (const q of Array.from(st.expanded)) {
        if (q === p || (p === '' ? true : q.startsWith(p + '.'))) st.expanded.delete(q);
      }
      try { await redraw(st.viewing); } catch (e) { say('Could not close the group: ' + e.message); }
      fillPanel();
    }

    // ---- pan and zoom ----------------------------------------------------

    function natural() {
      const vb = svg && svg.viewBox && svg.viewBox.baseVal;
      if (vb && vb.width) return { w: vb.width, h: vb.height };
      return { w: Number(svg.getAttribute('width')) || 800, h: Number(svg.getAttribute('height')) || 600 };
    }

    function applyZoom() {
      if (!svg) return;
      const { w, h } = natural();
      svg.setAttribute('width', String(Math.round(w * st.zoom)));
      svg.setAttribute('height', String(Math.round(h * st.zoom)));
      treeBox.setAttribute('data-zoom', String(Math.round(st.zoom * 1000) / 1000));
    }

    // zoomTo sets the zoom, keeping the point (cx, cy) of the window where
    // it is (the middle of the tree's box by default).
    function zoomTo(k, cx, cy) {
      if (!svg) return;
      k = Math.min(4, Math.max(0.05, k));
      const r = treeBox.getBoundingClientRect();
      if (cx === undefined) { cx = r.left + r.width / 2; cy = r.top + r.height / 2; }
      const s = svg.getBoundingClientRect();
      const ux = (cx - s.left) / st.zoom;
      const uy = (cy - s.top) / st.zoom;
      const old = st.zoom;
      st.zoom = k;
      applyZoom();
      treeBox.scrollLeft += ux * (k - old);
      treeBox.scrollTop += uy * (k - old);
    }

    function toolbar() {
      if (!treeBox) return;
      const mk = (id, label, text, f) => {
        let b = document.getElementById(id);
        if (!b) {
          b = el('button', { type: 'button', id, 'aria-label': label, title: label }, text);
          bar.append(b);
        }
        b.addEventListener('click', f);
      };
      let bar = document.getElementById('tree-tools');
      if (!bar) {
        bar = el('div', { id: 'tree-tools', class: 'tree-tools', role: 'toolbar', 'aria-label': 'Zoom' });
        treeBox.before(bar);
      }
      mk('zoom-in', 'Zoom in', '+', () => zoomTo(st.zoom * 1.25));
      mk('zoom-out', 'Zoom out', '−', () => zoomTo(st.zoom / 1.25));
      mk('zoom-reset', 'Actual size', '1:1', () => zoomTo(1));
    }

    function wireTree() {
      if (!treeBox) return;
      if (!treeBox.hasAttribute('tabindex')) treeBox.setAttribute('tabindex', '-1');
      let drag = null;
      let dragged = false;
      treeBox.addEventListener('pointerdown', (ev) => {
        if (ev.button !== 0) return;
        drag = { x: ev.clientX, y: ev.clientY, left: treeBox.scrollLeft, top: treeBox.scrollTop, id: ev.pointerId };
        dragged = false;
      });
      treeBox.addEventListener('pointermove', (ev) => {
        if (!drag || ev.pointerId !== drag.id) return;
        const dx = ev.clientX - drag.x;
        const dy = ev.clientY - drag.y;
        if (!dragged && Math.abs(dx) + Math.abs(dy) < 5) return;
        if (!dragged) {
          dragged = true;
          try { treeBox.setPointerCapture(ev.pointerId); } catch (e) { /* gone */ }
          treeBox.classList.add('dragging');
        }
        treeBox.scrollLeft = drag.left - dx;
        treeBox.scrollTop = drag.top - dy;
      });
      const end = () => { drag = null; treeBox.classList.remove('dragging'); };
      treeBox.addEventListener('pointerup', end);
      treeBox.addEventListener('pointercancel', end);
      treeBox.addEventListener('wheel', (ev) => {
        if (!svg) return;
        ev.preventDefault();
        zoomTo(st.zoom * Math.pow(1.0015, -ev.deltaY), ev.clientX, ev.clientY);
      }, { passive: false });
      treeBox.addEventListener('click', (ev) => {
        if (dragged) { dragged = false; ev.stopPropagation(); ev.preventDefault(); return; }
        const g = ev.target.closest && ev.target.closest('g.node[data-path]');
        if (!g || !treeBox.contains(g)) return;
        const p = g.getAttribute('data-path');
        g.focus({ preventScroll: true });
        select(p);
        if (g.classList.contains('group')) expand(p);
      });
      treeBox.addEventListener('keydown', onTreeKey);
    }

    function onTreeKey(ev) {
      if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
      const focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest('g.node[data-path]') : null;
      const here = focused ? focused.getAttribute('data-path') : st.selected;
      const go = (p) => {
        const g = p === null || p === undefined ? null : nodeEls.get(p);
        if (!g) return;
        for (const o of svg.querySelectorAll('g.node[tabindex="0"]')) o.setAttribute('tabindex', '-1');
        g.setAttribute('tabindex', '0');
        g.focus();
        if (g.scrollIntoView) g.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      };
      const siblings = (p) => kids.get(parentPath(p)) || [p];
      switch (ev.key) {
        case '+': case '=': zoomTo(st.zoom * 1.25); break;
        case '-': case '_': zoomTo(st.zoom / 1.25); break;
        case '0': zoomTo(1); break;
        case 'Escape': deselect(); break;
        case 'ArrowUp': if (here !== null && here !== undefined) go(parentPath(here)); else go(''); break;
        case 'ArrowDown': go(here === null || here === undefined ? '' : (kids.get(here) || [])[0]); break;
        case 'ArrowLeft': case 'ArrowRight': {
          if (here === null || here === undefined) { go(''); break; }
          const sib = siblings(here);
          const i = sib.indexOf(here) + (ev.key === 'ArrowLeft' ? -1 : 1);
          go(sib[i]);
          break;
        }
        case 'Enter': case ' ': {
          if (here === null || here === undefined || !nodeEls.has(here)) return;
          select(here);
          if (nodeEls.get(here).classList.contains('group')) expand(here);
          break;
        }
        default: return;
      }
      ev.preventDefault();
    }

    // ---- the header ------------------------------------------------------

    function setField(name, text) {
      if (!header) return;
      for (const e of header.querySelectorAll('[data-field="' + name + '"]')) {
        if (e.textContent !== text) e.textContent = text;
      }
    }

    // showSummary writes a job's state into the header: s has status,
    // version and, when known, settled, total, failure, cancel, updated.
    function showSummary(s) {
      main.setAttribute('data-status', s.status);
      if (header) header.setAttribute('data-status', s.status);
      setField('status', s.status);
      setField('version', String(s.version));
      if (s.total !== undefined) setField('progress', s.settled + '/' + s.total);
      if (s.updated) {
        for (const t of header ? header.querySelectorAll('[data-field="updated"]') : []) {
          t.setAttribute('datetime', s.updated);
          t.textContent = new Date(s.updated).toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
        }
      }
      if (s.failure) setField('failure', showPath(s.failure.path) + (s.failure.action ? ' (' + s.failure.action + ')' : '') + ': ' + s.failure.message);
      if (s.cancel) setField('cancel', s.cancel.reason);
      if (s.status !== 'running' && header) {
        for (const t of header.querySelectorAll('time[data-start]:not([data-end])')) {
          t.setAttribute('data-end', s.updated || new Date().toISOString());
          if (s.updated) t.textContent = fmtDuration(Date.parse(s.updated) - Date.parse(t.dataset.start));
        }
        const c = document.getElementById('cancel');
        if (c) c.disabled = true;
      }
    }

    // ---- steps and the timeline ----------------------------------------

    function lastStep() {
      if (!stepsList) return 0;
      let v = 0;
      for (const li of stepsList.querySelectorAll(':scope > li[data-version]')) v = Math.max(v, Number(li.dataset.version) || 0);
      return v;
    }

    function stepOutcomes(s) {
      const out = new Set();
      if (s.created) out.add('created');
      for (const r of s.results || []) out.add(r.timer ? 'timer' : r.ok ? 'succeeded' : 'failed');
      if ((s.dispatched || []).length) out.add('dispatched');
      if (s.cancel) out.add('cancelled');
      return out;
    }

    // stepItem makes the <li> of step s (api.Step).
    function stepItem(s) {
      const paths = new Set();
      const actions = new Set();
      for (const r of s.results || []) {
        paths.add(showPath(r.path));
        if (r.action) actions.add(r.action);
      }
      for (const a of s.dispatched || []) paths.add(showPath(a.replace(/#\d+$/, '')));
      const li = el('li', {
        id: 'step-' + s.version, 'data-version': s.version, 'data-status': s.status,
        'data-outcomes': Array.from(stepOutcomes(s)).join(' '),
        'data-paths': Array.from(paths).join(' '), 'data-actions': Array.from(actions).join(' '),
        tabindex: '-1',
      });
      const head = el('p', { class: 'step-head' },
        el('a', { href: '?version=' + s.version + '#step-' + s.version, class: 'step-link' }, 'v' + s.version), ' ');
      if (s.time) head.append(el('time', { datetime: s.time }, s.time.replace('T', ' ').replace('Z', ' UTC')), ' ');
      head.append(el('span', { class: 'status', 'data-status': s.status }, s.status + ' ' + s.settled + '/' + s.total));
      if (s.created) head.append(' ', el('span', { class: 'created' }, 'created'));
      li.append(head);
      if ((s.results || []).length) {
        const ul = el('ul', { class: 'results' });
        for (const r of s.results) {
          const word = r.timer ? 'timer' : r.ok ? 'succeeded' : 'failed';
          const item = el('li', { 'data-outcome': word },
            el('span', { class: 'result-path' }, showPath(r.path)), ' ',
            r.action ? el('span', { class: 'result-action' }, r.action) : null, r.action ? ' ' : null,
            el('span', { class: 'result-status' }, word));
          const v = r.ok ? r.output : r.error;
          if (v) item.append(': ', el('span', { class: 'result-value' }, clip(v, 120)));
          ul.append(item);
        }
        li.append(ul);
      }
      if ((s.dispatched || []).length) {
        li.append(el('p', { class: 'dispatched' }, 'dispatched ' + s.dispatched.join(', ')));
      }
      if (s.cancel) li.append(el('p', { class: 'cancel' }, 'cancel: ' + s.cancel.reason));
      return li;
    }

    function addSteps(steps) {
      if (!stepsList) return;
      let last = lastStep();
      for (const s of steps) {
        if (s.version <= last) continue;
        const li = stepItem(s);
        stepsList.append(li);
        last = s.version;
        filterOne(li);
      }
    }

    // fillSteps reads the history the list lacks, up to the job's newest
    // version (a snapshot or a long poll carries no steps).
    async function fillSteps() {
      if (!stepsList) return;
      for (let guard = 0; guard < 1000; guard++) {
        const from = lastStep();
        if (from >= st.latest) return;
        const h = await getJSON(apiPath + '/history?from=' + from + '&limit=1000');
        if (!h.steps.length) return;
        addSteps(h.steps);
      }
    }

    // The timeline is drawn by the server; a running job's is fetched
    // again (the page, its #timeline taken) at most every 2 s.
    const refreshTimeline = throttle(async () => {
      const tl = document.getElementById('timeline');
      if (!tl) return;
      const doc = parseHTML(await getText(jobPath));
      const fresh = doc.getElementById('timeline');
      if (!fresh) return;
      tl.replaceChildren(...Array.from(fresh.childNodes, (n) => document.importNode(n, true)));
      markStep();
    }, 2000);

    function markStep() {
      const v = st.viewing;
      for (const e of document.querySelectorAll('#steps > li.current, #timeline .current')) {
        e.classList.remove('current');
        e.removeAttribute('aria-current');
      }
      if (v === null) return;
      const li = document.getElementById('step-' + v);
      if (li) {
        li.classList.add('current');
        li.setAttribute('aria-current', 'step');
      }
    }

    // ---- step filters ------------------------------------------------------

    const filters = document.getElementById('step-filters');
    function filterValues() {
      const get = (n) => {
        const e = filters && filters.querySelector('[name="' + n + '"]');
        return e ? String(e.value || '').trim().toLowerCase() : '';
      };
      return { status: get('status'), action: get('action'), path: get('path') };
    }
    let fv = { status: '', action: '', path: '' };

    function filterOne(li) {
      const has = (attr, word) => (li.getAttribute(attr) || '').toLowerCase().split(' ').includes(word);
      let ok = true;
      if (fv.status) ok = has('data-outcomes', fv.status) || (li.getAttribute('data-status') || '') === fv.status;
      if (ok && fv.action) ok = (li.getAttribute('data-actions') || '').toLowerCase().includes(fv.action);
      if (ok && fv.path) ok = (li.getAttribute('data-paths') || '').toLowerCase().includes(fv.path);
      li.hidden = !ok;
    }

    function applyFilters() {
      fv = filterValues();
      if (!stepsList) return;
      let shown = 0;
      for (const li of stepsList.querySelectorAll(':scope > li')) {
        filterOne(li);
        if (!li.hidden) shown++;
      }
      const count = filters && filters.querySelector('[data-field="shown"]');
      if (count) count.textContent = shown + ' shown';
      if (timelineBars()) {
        for (const b of timelineBars()) {
          const p = (b.getAttribute('data-path') || '');
          const hide = fv.path && !showPath(p).toLowerCase().includes(fv.path);
          b.classList.toggle('filtered-out', !!hide);
        }
      }
    }

    function timelineBars() {
      const tl = document.getElementById('timeline');
      return tl ? tl.querySelectorAll('[data-path][data-version]') : null;
    }

    // ---- time travel ---------------------------------------------------

    let toLive = null;
    function liveButton() {
      toLive = document.getElementById('to-live');
      if (!toLive) {
        toLive = el('button', { type: 'button', id: 'to-live' }, 'Back to live');
        (header || main).append(toLive);
      }
      toLive.addEventListener('click', (ev) => { ev.preventDefault(); backToLive(); });
      toLive.hidden = st.viewing === null;
    }

    async function travelTo(v) {
      if (!(v > 0)) return;
      st.viewing = v;
      main.setAttribute('data-live', 'false');
      setURL({ version: v }, 'step-' + v);
      if (toLive) toLive.hidden = false;
      markStep();
      try {
        await redraw(v);
      } catch (e) {
        say('Could not show version ' + v + ': ' + e.message);
        return;
      }
      if (st.viewing !== v) return;
      const s = svg ? svg.getAttribute('data-status') : null;
      if (s) showSummary({ status: s, version: v });
      fillPanel();
    }

    async function backToLive() {
      st.viewing = null;
      setURL({ version: null }, '');
      if (toLive) toLive.hidden = true;
      markStep();
      try {
        await redraw(null);
      } catch (e) {
        say('Could not show the job as it is now: ' + e.message);
        return;
      }
      if (st.viewing !== null) return;
      main.setAttribute('data-live', st.status === 'running' ? 'true' : 'false');
      if (st.summary) showSummary(st.summary);
      fillPanel();
    }

    function wireSteps() {
      if (!stepsList) return;
      stepsList.addEventListener('click', (ev) => {
        const a = ev.target.closest('a');
        const li = ev.target.closest('#steps > li[data-version]');
        if (!li) return;
        if (a && !a.classList.contains('step-link') && !(a.getAttribute('href') || '').includes('version=')) return;
        ev.preventDefault();
        travelTo(Number(li.dataset.version));
      });
      stepsList.addEventListener('keydown', (ev) => {
        const li = ev.target.closest('#steps > li[data-version]');
        if (!li) return;
        let next = null;
        if (ev.key === 'ArrowDown') { next = li.nextElementSibling; while (next && next.hidden) next = next.nextElementSibling; }
        else if (ev.key === 'ArrowUp') { next = li.previousElementSibling; while (next && next.hidden) next = next.previousElementSibling; }
        else if (ev.key === 'Enter') { ev.preventDefault(); travelTo(Number(li.dataset.version)); return; }
        else return;
        ev.preventDefault();
        if (next) { next.setAttribute('tabindex', '0'); next.focus(); }
      });
      for (const li of stepsList.querySelectorAll(':scope > li[data-version]')) {
        if (!li.hasAttribute('tabindex')) li.setAttribute('tabindex', '-1');
      }
      const first = stepsList.querySelector(':scope > li[data-version]');
      if (first) first.setAttribute('tabindex', '0');
      const tl = document.getElementById('timeline');
      if (tl) {
        tl.addEventListener('click', (ev) => {
          const b = ev.target.closest('[data-path][data-version]');
          if (!b) return;
          ev.preventDefault();
          const p = b.getAttribute('data-path');
          if (nodeEls.has(p)) select(p, { scroll: true });
          const li = document.getElementById('step-' + b.getAttribute('data-version'));
          if (li && li.scrollIntoView) li.scrollIntoView({ block: 'nearest' });
        });
      }
      if (filters) {
        filters.addEventListener('input', applyFilters);
        filters.addEventListener('change', applyFilters);
        filters.addEventListener('submit', (ev) => { ev.preventDefault(); applyFilters(); });
      }
      window.addEventListener('hashchange', () => {
        const m = /^#step-(\d+)$/.exec(location.hash);
        if (m) travelTo(Number(m[1]));
      });
    }

    // ---- live: the stream, its fallback, and what they bring --------------

    const conn = { es: null, got: false, failures: 0, mode: 'stream', delay: 0, timer: null, stopped: false };

    function onSteps(data, v) {
      const steps = data.steps || [];
      for (const n of data.changed || []) st.nodes.set(n.path, { node: n, v });
      const lastS = steps[steps.length - 1];
      st.latest = Math.max(st.latest, v || (lastS ? lastS.version : 0));
      addSteps(steps);
      if (lastS) {
        st.status = lastS.status;
        st.summary = Object.assign({}, st.summary || {}, {
          status: lastS.status, version: lastS.version, settled: lastS.settled, total: lastS.total,
          updated: lastS.time || (st.summary && st.summary.updated),
        });
        if (lastS.failure) st.summary.failure = lastS.failure;
        if (lastS.cancel) st.summary.cancel = lastS.cancel;
      }
      if (st.viewing === null) {
        let hidden = false;
        for (const n of data.changed || []) {
          const g = nodeEls.get(n.path);
          if (g) paint(g, n); else hidden = true;
        }
        // A group's counts move with the nodes under it.
        for (const n of data.changed || []) {
          const up = parentPath(n.path);
          const a = up === null ? null : drawnAncestor(up);
          if (a && a.classList.contains('group')) hidden = true;
        }
        if (hidden) staleGroups();
        if (st.summary) showSummary(st.summary);
        setShown(st.latest);
        if (st.selected !== null && (data.changed || []).some((n) => n.path === st.selected)) fillPanel();
      }
      refreshTimeline();
    }

    function onSnapshot(j, v) {
      st.latest = v || j.version;
      st.status = j.status;
      st.summary = j;
      for (const n of j.nodes || []) st.nodes.set(n.path, { node: n, v: st.latest });
      if (st.viewing === null) {
        for (const n of j.nodes || []) {
          const g = nodeEls.get(n.path);
          if (g) paint(g, n);
        }
        if (svg && svg.querySelector('g.node.group')) staleGroups();
        showSummary(j);
        setShown(st.latest);
        if (st.selected !== null) fillPanel();
      }
      fillSteps().catch(() => {});
      refreshTimeline();
    }

    function onEnd(s) {
      stop();
      st.status = s.status;
      st.summary = Object.assign({}, st.summary || {}, s);
      st.latest = Math.max(st.latest, s.version);
      if (st.viewing === null) {
        main.setAttribute('data-live', 'false');
        showSummary(st.summary);
      }
      unsay();
      // The end may follow steps the page has not drawn (a snapshot does
      // not carry the steps): bring the list and the drawing up to it.
      fillSteps().catch(() => {});
      if (st.viewing === null && st.shown < st.latest) redraw(null).catch(() => {});
      refreshTimeline();
    }

    function stop() {
      conn.stopped = true;
      if (conn.es) { conn.es.close(); conn.es = null; }
      if (conn.timer) { clearTimeout(conn.timer); conn.timer = null; }
    }

    function later(f) {
      if (conn.stopped) return;
      conn.delay = Math.min(5000, conn.delay ? conn.delay * 2 : 250);
      clearTimeout(conn.timer);
      conn.timer = setTimeout(f, conn.delay);
    }

    function connect() {
      if (conn.stopped) return;
      if (conn.es) conn.es.close();
      conn.got = false;
      const es = new EventSource(apiPath + '/events?after=' + st.latest);
      conn.es = es;
      const take = (f) => (ev) => {
        if (conn.es !== es) return;
        conn.got = true;
        conn.failures = 0;
        conn.delay = 0;
        unsay();
        let data;
        try { data = JSON.parse(ev.data); } catch (e) { return; }
        f(data, Number(ev.lastEventId) || 0);
      };
      es.addEventListener('open', () => { if (conn.es === es && !loginGone) unsay(); });
      es.addEventListener('snapshot', take(onSnapshot));
      es.addEventListener('step', take(onSteps));
      es.addEventListener('end', take(onEnd));
      es.addEventListener('shutdown', () => {
        if (conn.es !== es) return;
        es.close();
        conn.es = null;
        say('The server is restarting: reconnecting…');
        later(probe);
      });
      es.addEventListener('error', () => {
        if (conn.es !== es) return;
        es.close();
        conn.es = null;
        if (!conn.got) conn.failures++;
        say('The live connection is down: reconnecting…');
        later(probe);
      });
    }

    // probe asks the server about the job after a stream failed, to tell
    // a server that is gone (keep trying), an expired login (say so), a
    // settled job (catch up and stop) and a stream a proxy cuts (after two
    // such failures, long polling).
    async function probe() {
      if (conn.stopped) return;
      let s;
      try {
        s = await getJSON(apiPath + '?nodes=false');
      } catch (e) {
        if (e instanceof HTTPError && e.status === 401) { conn.delay = 5000; later(probe); return; }
        if (e instanceof HTTPError && e.status === 404) { stop(); say('This job no longer exists.'); return; }
        if (e instanceof HTTPError) conn.failures = Math.max(conn.failures - 1, 0);
        say('The server does not answer: reconnecting…');
        later(probe);
        return;
      }
      loginBack();
      if (s.status !== 'running') {
        await catchUp(s.version).catch(() => {});
        onEnd(s);
        return;
      }
      if (conn.failures >= 2) { conn.mode = 'poll'; poll(); return; }
      connect();
    }

    // catchUp brings the page to version v of the live job without the
    // stream: the steps from the history, the nodes from a fragment.
    async function catchUp(v) {
      if (v <= st.latest) return;
      st.latest = v;
      await fillSteps();
      if (st.viewing === null) await redraw(null);
    }

    // poll follows the job by long polls of its history (the stream's
    // fallback when a proxy breaks streams).
    async function poll() {
      if (conn.stopped) return;
      let h;
      try {
        h = await getJSON(apiPath + '/history?from=' + st.latest + '&wait=25s&limit=1000');
      } catch (e) {
        if (e instanceof HTTPError && e.status === 404) { stop(); say('This job no longer exists.'); return; }
        if (!(e instanceof HTTPError && e.status === 401)) say('The server does not answer: reconnecting…');
        later(poll);
        return;
      }
      conn.delay = 0;
      loginBack();
      unsay();
      const steps = h.steps || [];
      if (steps.length) {
        const lastS = steps[steps.length - 1];
        addSteps(steps);
        st.latest = lastS.version;
        st.status = lastS.status;
        st.summary = Object.assign({}, st.summary || {}, {
          status: lastS.status, version: lastS.version, settled: lastS.settled, total: lastS.total, updated: lastS.time,
        });
        if (lastS.failure) st.summary.failure = lastS.failure;
        if (lastS.cancel) st.summary.cancel = lastS.cancel;
        if (st.viewing === null) {
          try { await redraw(null); } catch (e) { /* the next poll draws */ }
          showSummary(st.summary);
          setShown(st.latest);
          if (st.selected !== null) fillPanel();
        }
        refreshTimeline();
      }
      if (h.status !== 'running' && st.latest >= h.latest) {
        try { onEnd(await getJSON(apiPath + '?nodes=false')); } catch (e) { stop(); }
        return;
      }
      poll();
    }

    // ---- the cancel form ---------------------------------------------------

    function wireCancel() {
      const b = document.getElementById('cancel');
      const form = b && b.form;
      if (!form) return;
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        const r = form.elements.namedItem('reason');
        const reason = r ? r.value : '';
        b.disabled = true;
        try {
          await request(apiPath + '/cancel', {
            method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
            body: JSON.stringify({ reason }),
          });
          say('Cancel requested: nothing new starts, finally blocks run.');
        } catch (e) {
          b.disabled = false;
          if (!(e instanceof HTTPError && e.status === 401)) say('The cancel failed: ' + e.message);
        }
      });
    }

    // ---- start ---------------------------------------------------------------

    index();
    toolbar();
    wireTree();
    wireSteps();
    wireCancel();
    liveButton();
    applyFilters();
    markStep();
    if (st.selected !== null && nodeEls.has(st.selected)) {
      markSelected();
      const g = nodeEls.get(st.selected);
      if (g.scrollIntoView) g.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      if (panel && (panel.hidden || !panel.childElementCount)) fillPanel();
    }
    setShown(st.shown);
    drawn();
    const hash = /^#step-(\d+)$/.exec(location.hash);
    if (hash && Number(hash[1]) !== st.viewing) travelTo(Number(hash[1]));
    if (st.viewing === null) {
      if (st.status === 'running') connect();
      else stop();
    } else {
      // A past version is shown: learn the newest before following it.
      getJSON(apiPath + '?nodes=false').then((s) => {
        st.latest = s.version;
        st.status = s.status;
        st.summary = s;
        if (s.status === 'running') connect(); else stop();
      }).catch(() => {});
    }
  }

  // =====================================================================
  // The job list.

  function listPage(table) {
    const rows = () => {
      const m = new Map();
      for (const tr of table.querySelectorAll('tr[data-job]')) m.set(tr.getAttribute('data-job'), tr);
      return m;
    };
    // The rows, the counts and the paging come from the server's page,
    // read again at most once a second after a change.
    const refresh = throttle(async () => {
      const doc = parseHTML(await getText(location.pathname + location.search));
      const fresh = doc.getElementById('jobs');
      if (fresh) {
        const tb0 = table.tBodies[0];
        const tb1 = fresh.tBodies[0];
        if (tb0 && tb1) tb0.replaceWith(document.importNode(tb1, true));
      }
      for (const sel of ['#counts', '#pages', '#job-counts']) {
        const a = document.querySelector(sel);
        const b = doc.querySelector(sel);
        if (a && b) a.replaceWith(document.importNode(b, true));
      }
      tick();
    }, 1000);

    let es = null;
    let failures = 0;
    const open = () => {
      es = new EventSource('/api/v1/events');
      es.addEventListener('open', () => { failures = 0; if (!loginGone) unsay(); });
      es.addEventListener('changes', (ev) => {
        let data;
        try { data = JSON.parse(ev.data); } catch (e) { return; }
        const byID = rows();
        let more = false;
        for (const c of data.changes || []) {
          const tr = byID.get(c.id);
          if (c.created || c.deleted || !tr) { more = more || c.created || (c.deleted && !!tr); continue; }
          if (tr.getAttribute('data-status') !== c.status) {
            tr.setAttribute('data-status', c.status);
            for (const e of tr.querySelectorAll('[data-field="status"]')) e.textContent = c.status;
            if (c.status !== 'running') {
              for (const t of tr.querySelectorAll('time[data-start]:not([data-end])')) {
                t.setAttribute('data-end', c.at);
                t.textContent = fmtDuration(Date.parse(c.at) - Date.parse(t.dataset.start));
              }
            }
            more = true;
          }
        }
        if (more) refresh();
      });
      es.addEventListener('resync', () => refresh());
      es.addEventListener('shutdown', () => { es.close(); say('The server is restarting: reconnecting…'); setTimeout(open, 500); });
      es.addEventListener('error', () => {
        if (es.readyState === EventSource.CLOSED) {
          failures++;
          request('/api/v1/jobs?limit=1').then(() => { loginBack(); setTimeout(open, Math.min(5000, 250 * 2 ** failures)); refresh(); })
            .catch((e) => {
              if (!(e instanceof HTTPError && e.status === 401)) say('The server does not answer: reconnecting…');
              setTimeout(open, 5000);
            });
          return;
        }
        say('The live connection is down: reconnecting…');
      });
    };
    open();
    drawn();
  }

  // =====================================================================
  // /new: validate as you type, draw the preview, submit.

  function newPage(area) {
    const problems = document.getElementById('problems');
    const preview = document.getElementById('preview');
    const idInput = document.getElementById('job-id');
    const form = area.form;
    let ticket = 0;
    let timer = null;

    function showProblems(list) {
      if (!problems) return;
      problems.replaceChildren(...list.map((p) => el('li', { 'data-problem-path': p.path === undefined ? '' : p.path },
        p.path === undefined ? '' : el('code', null, showPath(p.path)), p.path === undefined ? '' : ': ', p.message)));
      problems.hidden = list.length === 0;
      area.setAttribute('aria-invalid', list.length ? 'true' : 'false');
    }

    function drawPreview(nodes, unknown) {
      if (!preview) return;
      const max = 2000;
      const rowH = 30;
      const indent = 22;
      const shown = nodes.slice(0, max);
      let width = 320;
      for (const n of shown) width = Math.max(width, n.depth * indent + 300);
      const height = shown.length * rowH + 10 + (nodes.length > max ? rowH : 0);
      const s = document.createElementNS(SVG_NS, 'svg');
      const sa = (e, a) => { for (const [k, v] of Object.entries(a)) e.setAttribute(k, String(v)); return e; };
      const mk = (tag, a) => sa(document.createElementNS(SVG_NS, tag), a);
      sa(s, { class: 'baton-graph preview', viewBox: '0 0 ' + width + ' ' + height, width, height, 'font-family': 'monospace', 'font-size': '11', role: 'group', 'aria-label': 'preview of the workflow' });
      shown.forEach((n, i) => {
        const bad = n.action && unknown.has(n.action);
        const g = mk('g', { class: 'node' + (bad ? ' unknown-action' : ''), 'data-path': n.path, 'data-status': 'idle', 'data-kind': n.kind, transform: 'translate(' + (5 + n.depth * indent) + ',' + (5 + i * rowH) + ')' });
        g.append(mk('rect', { class: 'box', width: 280, height: rowH - 6, rx: 5, fill: '#FFFFFF', stroke: bad ? STYLES.failed.stroke : STYLES.idle.stroke, 'stroke-width': bad ? 2.5 : 1.5 }));
        const t = mk('text', { x: 8, y: 16, fill: '#1A1A1A' });
        const kind = mk('tspan', { fill: '#4D4D4D' });
        kind.textContent = n.kind + ' ';
        const what = mk('tspan', { 'font-weight': 'bold' });
        what.textContent = clip(n.action || n.name || '', 24);
        t.append(kind, what);
        if (n.payload) {
          const pl = mk('tspan', { fill: '#4D4D4D' });
          pl.textContent = ' ' + clip(n.payload, 20);
          t.append(pl);
        }
        const title = mk('title', {});
        title.textContent = showPath(n.path) + (bad ? ': no worker runs ' + n.action : '');
        g.append(title, t);
        s.append(g);
      });
      if (nodes.length > max) {
        const t = mk('text', { x: 5, y: height - 8, fill: '#4D4D4D' });
        t.textContent = (nodes.length - max) + ' more nodes not drawn';
        s.append(t);
      }
      preview.replaceChildren(s);
      preview.removeAttribute('data-stale');
    }

    async function validate() {
      const text = area.value;
      const mine = ++ticket;
      if (!text.trim()) {
        showProblems([]);
        if (preview) preview.replaceChildren();
        return;
      }
      let r;
      try {
        r = await fetch('/api/v1/workflows/validate', {
          method: 'POST', credentials: 'same-origin', body: text,
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        });
      } catch (e) {
        if (mine === ticket) showProblems([{ message: 'The server does not answer: ' + e.message }]);
        return;
      }
      let body = null;
      try { body = await r.json(); } catch (e) { body = null; }
      if (mine !== ticket) return;
      if (r.status === 401) { loginExpired(); return; }
      if (r.ok && body) {
        const unknown = new Set(body.unknown_actions || []);
        const list = [];
        if (unknown.size) {
          for (const n of body.nodes) {
            if (n.action && unknown.has(n.action)) list.push({ path: n.path, message: 'no worker runs action ' + JSON.stringify(n.action) });
          }
        }
        showProblems(list);
        drawPreview(body.nodes || [], unknown);
        return;
      }
      const ps = body && Array.isArray(body.problems) && body.problems.length ? body.problems
        : [{ message: (body && (body.detail || body.title)) || 'HTTP ' + r.status }];
      showProblems(ps);
      if (preview) preview.setAttribute('data-stale', 'true');
    }

    function soon() {
      clearTimeout(timer);
      timer = setTimeout(validate, 300);
    }

    area.addEventListener('input', soon);
    const upload = document.getElementById('upload') || (form && form.querySelector('input[type=file]'));
    if (upload) {
      upload.addEventListener('change', async () => {
        const f = upload.files && upload.files[0];
        if (!f) return;
        area.value = await f.text();
        validate();
      });
    }
    if (form) {
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        const id = idInput ? idInput.value.trim() : '';
        const submit = form.querySelector('[type=submit]');
        if (submit) submit.disabled = true;
        try {
          const r = await request('/api/v1/jobs' + (id ? '?id=' + encodeURIComponent(id) : ''), {
            method: 'POST', body: area.value,
            headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          });
          const s = await r.json();
          location.assign('/jobs/' + encodeURIComponent(s.id));
        } catch (e) {
          if (submit) submit.disabled = false;
          if (e instanceof HTTPError && e.status === 401) return;
          const p = e.problem;
          showProblems(p && Array.isArray(p.problems) && p.problems.length ? p.problems : [{ message: e.message }]);
        }
      });
    }
    if (area.value.trim()) validate();
    drawn();
  }

  // =====================================================================

  function start() {
    startTicking();
    const main = document.getElementById('job');
    if (main && main.dataset.job !== undefined) { jobPage(main); return; }
    const jobs = document.getElementById('jobs');
    if (jobs && jobs.tagName === 'TABLE') { listPage(jobs); return; }
    const area = document.getElementById('workflow');
    if (area && area.tagName === 'TEXTAREA') { newPage(area); return; }
    drawn();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
