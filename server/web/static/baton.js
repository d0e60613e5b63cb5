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
    skipped: { fill: '#DDDDDD', stroke: '#8C8C8C', text: '#1A1A1A', icon: '↷' },
  };
  const UNKNOWN_STYLE = { fill: '#FFFFFF', stroke: '#000000', text: '#000000', icon: '?' };
  const PAYLOAD_CHARS = 40;
  const ERROR_CHARS = 60;
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
    // A page asked for without a valid session is sent to /login.
    if (r.redirected && new URL(r.url).pathname === '/login') {
      loginExpired();
      throw new HTTPError(401, null);
    }
    if (r.ok) {
      loginBack();
      return r;
    }
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

  // fmtDuration writes ms as the server's pages do (web.Duration): 850ms,
  // 12.3s, 4m05s, 2h03m.
  function fmtDuration(ms) {
    if (!(ms >= 0)) return '—';
    if (ms < 1000) return Math.floor(ms) + 'ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + 's';
    const s = Math.floor(ms / 1000);
    const m = Math.floor(s / 60);
    if (m < 60) return m + 'm' + String(s % 60).padStart(2, '0') + 's';
    return Math.floor(m / 60) + 'h' + String(m % 60).padStart(2, '0') + 'm';
  }

  // when writes an RFC 3339 time as the server's pages do.
  function when(t) {
    const d = new Date(t);
    if (Number.isNaN(d.getTime())) return '—';
    return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }

  const ICONS = { idle: '○', running: '▶', succeeded: '✓', failed: '✗', cancelled: '⊘', skipped: '↷', damaged: '⚠', signal: '✉' };

  // stateSpan is the pages' <span class="state">: icon and word.
  function stateSpan(status, plain) {
    return el('span', { class: 'state', 'data-status': status },
      el('span', { class: 'icon', 'aria-hidden': 'true' }, ICONS[status] || '?'), ' ',
      plain ? status : el('span', { class: 'word' }, status));
  }

  // setState sets a <span class="state"> to status.
  function setState(span, status) {
    if (!span) return;
    span.setAttribute('data-status', status);
    const icon = span.querySelector('.icon');
    if (icon) icon.textContent = ICONS[status] || '?';
    const word = span.querySelector('.word');
    if (word) word.textContent = status;
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

  // throttle returns a function that runs f at most once every ms (a
  // number, or a function giving it at each run); a call while f waits or
  // runs makes it run once more after (trailing).
  function throttle(f, ms) {
    const gap = typeof ms === 'function' ? ms : () => ms;
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
      timer = setTimeout(fire, Math.max(0, last + gap() - Date.now()));
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
      latest: Number(main.dataset.latest || main.dataset.version) || 0, // the newest version the page knows
      status: main.dataset.status || '', // the live job's status
      summary: null, // the newest summary or step data
      viewing: url0.searchParams.has('version') ? Number(url0.searchParams.get('version')) : null, // a past version shown, or null: live
      shown: Number(main.dataset.version) || 0, // the version the tree shows
      nodes: new Map(), // path -> {node, v}: the newest state the page got of a node, and its version
      selected: url0.searchParams.has('node') ? url0.searchParams.get('node') : null,
      expanded: new Set((main.dataset.expand || url0.searchParams.get('expand') || '').split(',').filter((p, i, all) => p !== '' || all.length > 1)),
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
    // data-status (the style sheet colours the band and the outline from
    // it), the state's icon and words, the tooltip if it has one. It
    // changes nothing when they are equal.
    function paint(g, n) {
      const line = bandLine(n);
      const state = g.querySelector('.state');
      if (g.getAttribute('data-status') === n.status && (!state || state.textContent === line)) return false;
      g.setAttribute('data-status', n.status);
      if (state) state.textContent = line;
      const label = g.querySelector('div.label[title]');
      if (label) label.title = tooltip(n, label.title);
      return true;
    }

    // A box gets its tooltip when first pointed at: the page's drawing
    // carries none (draw's PageSVG), so a big tree parses faster.
    function giveTooltip(ev) {
      const g = ev.target.closest && ev.target.closest('#tree g.node[data-path]');
      const label = g && g.querySelector('div.label');
      if (!label || label.hasAttribute('title')) return;
      const p = g.getAttribute('data-path');
      const n = st.nodes.get(p);
      let t = n ? tooltip(n, '') : showPath(p) + ': ' + g.getAttribute('data-status');
      if (g.classList.contains('group')) t += ', a closed group: open it to see its nodes';
      label.title = t;
    }

    // copyState sets the state of drawn node g as drawn node f of a
    // fragment of the same tree shows it (groups' counts included).
    function copyState(g, f) {
      const same = (sel) => {
        const a = g.querySelector(sel);
        const b = f.querySelector(sel);
        return (a ? a.textContent : null) === (b ? b.textContent : null);
      };
      const countsOf = (x) => Array.from(x.querySelectorAll('.count'), (c) => c.textContent).join('|');
      if (g.getAttribute('data-status') === f.getAttribute('data-status') && same('.state') && same('.line') && countsOf(g) === countsOf(f)) return;
      g.setAttribute('data-status', f.getAttribute('data-status'));
      // A map's second line counts its copies per state, a loop's says
      // its iteration: they move with the nodes under them.
      const l0 = g.querySelector('.line');
      const l1 = f.querySelector('.line');
      if (l0 && l1) l0.textContent = l1.textContent;
      const a = g.querySelector('.state');
      const b = f.querySelector('.state');
      if (a && b) a.textContent = b.textContent;
      const label = g.querySelector('div.label[title]');
      if (label) label.removeAttribute('title'); // given again when pointed at
      const old = g.querySelectorAll('.count');
      const fresh = f.querySelectorAll('.count');
      if (old.length === fresh.length) {
        old.forEach((c, i) => {
          c.textContent = fresh[i].textContent;
          for (const name of ['data-status', 'data-count']) c.setAttribute(name, fresh[i].getAttribute(name));
        });
      } else {
        old.forEach((c) => c.remove());
        const before = g.querySelector('.state');
        if (before) for (const c of fresh) before.before(document.importNode(c, true));
      }
    }

    // patchFrom sets every drawn node's state from a fragment of the
    // same tree (same expansions). It returns false when the fragment's
    // shape differs (then the caller swaps the drawing).
    function patchFrom(frag) {
      const fs = frag.querySelectorAll('g.node[data-path]');
      if (fs.length !== nodeEls.size) return false;
      for (const f of fs) {
        const g = nodeEls.get(f.getAttribute('data-path'));
        // A node that opened or closed as a group (a map whose copies
        // came) changes the drawing's shape.
        if (!g || g.getAttribute('data-group') !== f.getAttribute('data-group')) return false;
      }
      for (const f of fs) copyState(nodeEls.get(f.getAttribute('data-path')), f);
      for (const name of ['data-version', 'data-status', 'data-boxes', 'data-nodes']) {
        if (frag.hasAttribute(name)) svg.setAttribute(name, frag.getAttribute(name));
      }
      if (frag.hasAttribute('data-truncated')) svg.setAttribute('data-truncated', frag.getAttribute('data-truncated'));
      else svg.removeAttribute('data-truncated');
      const t0 = svg.querySelector(':scope > title');
      const t1 = frag.querySelector(':scope > title');
      if (t0 && t1) t0.textContent = t1.textContent;
      const h0 = svg.querySelector(':scope > text.title');
      const h1 = frag.querySelector(':scope > text.title');
      if (h0 && h1) h0.textContent = h1.textContent;
      treeNote();
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
      treeNote();
    }

    // reapply paints what the page got of the live job after version v
    // (a fragment of version v was just applied), and forgets the rest
    // but the selected node's: the fragment has it, so what the page
    // keeps stays bounded by the steps between two fragments.
    function reapply(v) {
      for (const [p, { node, v: at }] of st.nodes) {
        if (at <= v) {
          if (p !== st.selected) st.nodes.delete(p);
          continue;
        }
        const g = nodeEls.get(p);
        if (g) paint(g, node); else staleGroups();
      }
    }

    // setShown records the version the page shows; live, the drawing's
    // own version, state and title follow.
    function setShown(v, status) {
      st.shown = v;
      main.setAttribute('data-version', String(v));
      document.body.setAttribute('data-version', String(v));
      if (svg && status) {
        svg.setAttribute('data-version', String(v));
        svg.setAttribute('data-status', status);
        const line = 'job ' + clip(id, 60) + ' v' + v + ': ' + status;
        for (const t of svg.querySelectorAll(':scope > title, :scope > text.title')) t.textContent = line;
      }
    }

    // fragment fetches the drawing at version v (null: the newest) with
    // the groups the page has opened.
    async function fragment(v) {
      const q = new URLSearchParams();
      if (v !== null) q.set('version', String(v));
      if (st.expanded.size) q.set('expand', expandParam());
      const qs = q.toString();
      const frag = parseSVG(await getText(jobPath + '/tree.svg' + (qs ? '?' + qs : '')));
      // The page's style sheet colours the drawing: an inline <style>
      // would only be refused by the Content-Security-Policy.
      for (const e of frag.querySelectorAll('style')) e.remove();
      return frag;
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

    // expandParam is the expand query parameter of the opened groups, as
    // the server writes it (sorted, comma-separated).
    // The root's path is empty: alone it is written "," (an empty
    // parameter would open nothing).
    function expandParam(set) {
      const e = set || st.expanded;
      const p = Array.from(e).sort().join(',');
      return p === '' && e.size ? ',' : p;
    }

    // Groups whose counts changed, maps whose copies did, and a tree
    // that grew (a map's copies, a loop's next iteration: nodes the
    // drawing lacks) are brought up to date by a fragment, at most once a
    // second.
    const staleGroups = throttle(async () => {
      if (st.viewing !== null || !svg) return;
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
      }
      const g = st.selected === null ? null : nodeEls.get(st.selected);
      if (!g) return;
      g.classList.add('selected');
      g.setAttribute('aria-current', 'true');
      for (const o of svg.querySelectorAll('g.node[tabindex="0"]')) o.setAttribute('tabindex', '-1');
      g.setAttribute('tabindex', '0');
    }

    function setURL(changes, hash) {
      const u = new URL(location.href);
      for (const [k, v] of Object.entries(changes)) {
        if (v === null || v === undefined) u.searchParams.delete(k); else u.searchParams.set(k, String(v));
      }
      if (hash !== undefined) u.hash = hash || '';
      // The page calls this at load with nothing to change: an unchanged
      // URL is not written again.
      const to = u.pathname + u.search + u.hash;
      if (to !== location.pathname + location.search + location.hash) history.replaceState(history.state, '', to);
    }

    let panelTicket = 0;

    function select(p, opts) {
      st.selected = p;
      markSelected();
      setURL({ node: p });
      treeNote();
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
      treeNote();
      if (panel) {
        panel.replaceChildren();
        panel.hidden = true;
      }
    }

    // fillPanel shows the selected node: from what the live stream
    // carried, else from the node route at the version shown. full asks
    // for the values whole (up to the server's 1 MiB).
    async function fillPanel(full) {
      if (!panel || st.selected === null) return;
      const p = st.selected;
      const ticket = ++panelTicket;
      const known = st.viewing === null ? st.nodes.get(p) : null;
      if (known && !full) {
        renderPanel(known.node, false);
        return;
      }
      if (panel.getAttribute('data-node') !== p || panel.hidden) {
        const g = nodeEls.get(p);
        renderPanel({ path: p, kind: g ? g.getAttribute('data-kind') : '', status: g ? g.getAttribute('data-status') : '' }, false, 'Reading…');
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

    // renderPanel fills #panel with node n (api.Node) as the server
    // renders it; full says its values are whole, else they may be
    // clipped (n.clipped) and "show all" fetches them.
    function renderPanel(n, full, note) {
      panel.hidden = false;
      panel.setAttribute('data-node', n.path);
      const dl = el('dl', { class: 'node' });
      const row = (name, dd) => dl.append(el('dt', null, name), dd);
      if (n.kind) row('Kind', el('dd', { class: 'kind' }, n.kind));
      if (n.name) row('Name', el('dd', { class: 'name' }, n.name));
      if (n.action) row('Action', el('dd', { class: 'action' }, el('code', null, n.action)));
      if (n.status) row('State', el('dd', null, stateSpan(n.status)));
      if (n.attempt) row('Attempts', el('dd', { class: 'attempt' }, String(n.attempt)));
      if (n.retry) row('Retry due', el('dd', null, el('time', { datetime: n.retry }, when(n.retry))));
      for (const [f, label] of [['payload', 'Payload'], ['output', 'Output'], ['error', 'Error']]) {
        if (n[f]) row(label, el('dd', null, el('pre', { class: 'value ' + f }, n[f])));
      }
      if (n.failure) {
        row('Failure', el('dd', { class: 'failure' }, el('code', null, showPath(n.failure.path)),
          n.failure.kind ? ' (' + n.failure.kind + ')' : '', ': ' + n.failure.message,
          n.failure.others ? ' and ' + n.failure.others + ' more' : ''));
      }
      const close = el('button', { type: 'button', class: 'close', 'aria-label': 'Close the details' }, '×');
      close.addEventListener('click', deselect);
      const kidsOf = [close, el('h2', { id: 'panel-title' }, 'Node ', el('code', { class: 'path' }, showPath(n.path))), dl];
      if (n.clipped && !full) {
        const q = new URLSearchParams({ path: n.path });
        if (st.viewing !== null) q.set('version', String(st.viewing));
        const more = el('a', { id: 'show-all', href: apiPath + '/node?' + q }, 'show all');
        kidsOf.push(el('p', { class: 'clipped' }, 'Values are clipped. ', more));
      } else if (n.clipped) {
        kidsOf.push(el('p', { class: 'clipped' }, 'Values longer than 1 MiB are cut there by the server.'));
      }
      const bars = attemptsOf(n.path);
      if (bars.length) {
        const ol = el('ol', { class: 'attempts' });
        for (const b of bars) {
          const v = b.getAttribute('data-version');
          const applied = b.getAttribute('data-applied');
          const status = b.getAttribute('data-status') || '';
          const worker = b.getAttribute('data-worker');
          ol.append(el('li', { 'data-version': v, 'data-status': status },
            '#' + (b.getAttribute('data-attempt') || '?') + ': dispatched at ', el('a', { href: '#step-' + v }, 'v' + v),
            applied && applied !== '0' ? ', result at ' : '', applied && applied !== '0' ? el('a', { href: '#step-' + applied }, 'v' + applied) : '',
            worker ? ', on ' : '', worker ? el('code', { class: 'worker' }, worker) : '',
            ': ', stateSpan(status, true)));
        }
        kidsOf.push(el('h3', null, 'Attempts'), ol);
      }
      if (st.expanded.has(n.path)) {
        const b = el('button', { type: 'button', class: 'collapse' }, 'Close this group');
        b.addEventListener('click', () => collapse(n.path));
        kidsOf.push(b);
      }
      if (note) kidsOf.push(el('p', { class: 'panel-note' }, note));
      panel.replaceChildren(...kidsOf);
    }

    // attemptsOf returns the timeline's bars of path p: its attempts.
    function attemptsOf(p) {
      const out = [];
      for (const b of document.querySelectorAll('#timeline rect.bar[data-path]')) {
        if (b.getAttribute('data-path') === p) out.push(b);
      }
      return out;
    }

    // ---- groups --------------------------------------------------------

    async function expand(p) {
      if (st.expanded.has(p)) return;
      st.expanded.add(p);
      try {
        await redraw(st.viewing);
      } catch (e) {
        st.expanded.delete(p);
        say('Could not open the group: ' + e.message);
        return;
      }
      setURL({ expand: expandParam() || null });
      treeNote();
      main.setAttribute('data-expand', expandParam());
    }

    // treeNote keeps the line above the tree in step with the drawing
    // shown (a group opened or closed, a map's copies come, a loop's
    // next iteration, a version travelled to): the boxes and nodes it
    // counts, whether the bound on boxes closed groups, and links to the
    // closed groups (at most 50), as the server writes it (web.Tree);
    // #tree's data-boxes, data-nodes and data-truncated follow.
    let noteKey = null;
    function treeNote() {
      if (!treeBox || !svg) return;
      const boxes = svg.getAttribute('data-boxes') || String(nodeEls.size);
      const nodes = svg.getAttribute('data-nodes') || treeBox.getAttribute('data-nodes') || '';
      const truncated = svg.getAttribute('data-truncated') === 'true';
      const groups = Array.from(svg.querySelectorAll('g.node.group[data-path]'), (g) => g.getAttribute('data-path')).slice(0, 50);
      const key = JSON.stringify([boxes, nodes, truncated, groups, expandParam(), st.selected, st.viewing]);
      if (key === noteKey) return;
      noteKey = key;
      treeBox.setAttribute('data-boxes', boxes);
      treeBox.setAttribute('data-nodes', nodes);
      if (truncated) treeBox.setAttribute('data-truncated', 'true'); else treeBox.removeAttribute('data-truncated');
      const note = document.querySelector('#tree-section p.tree-note');
      if (!note) return;
      const kids = [boxes + ' boxes for ' + nodes + ' nodes'];
      if (truncated) kids.push('; some groups stay closed to keep within 2,000 boxes');
      kids.push('.');
      groups.forEach((p, i) => {
        kids.push(i ? ', ' : ' Closed groups: ');
        kids.push(el('a', { class: 'expand', href: groupURL(p), 'data-group-path': p }, 'open ' + showPath(p)));
      });
      if (groups.length) kids.push('.');
      note.replaceChildren(...kids);
    }

    // groupURL is the page with the group at p opened too, as the
    // server links it (web.PageURL): without the script, a plain link.
    function groupURL(p) {
      const q = new URLSearchParams();
      q.set('expand', expandParam(new Set(st.expanded).add(p)));
      if (st.selected !== null) q.set('node', st.selected);
      if (st.viewing !== null) q.set('version', String(st.viewing));
      return jobPath + '?' + q;
    }

    async function collapse(p) {
      for (const q of Array.from(st.expanded)) {
        if (q === p || (p === '' ? true : q.startsWith(p + '.'))) st.expanded.delete(q);
      }
      try { await redraw(st.viewing); } catch (e) { say('Could not close the group: ' + e.message); }
      setURL({ expand: expandParam() || null });
      main.setAttribute('data-expand', expandParam());
      treeNote();
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
      // Only what changes is set: at load the drawing already has its
      // size, and each attribute set makes the browser lay it out again.
      const set = (e, k, v) => { if (e.getAttribute(k) !== v) e.setAttribute(k, v); };
      set(svg, 'width', String(Math.round(w * st.zoom)));
      set(svg, 'height', String(Math.round(h * st.zoom)));
      set(treeBox, 'data-zoom', String(Math.round(st.zoom * 1000) / 1000));
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

    function wirePanel() {
      if (!panel) return;
      // "show all" (the server's link or ours) fetches the node whole.
      panel.addEventListener('click', (ev) => {
        const a = ev.target.closest('#show-all');
        if (!a) return;
        ev.preventDefault();
        if (st.selected === null) st.selected = panel.getAttribute('data-node');
        fillPanel(true);
      });
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
      treeBox.addEventListener('pointerover', giveTooltip);
      treeBox.addEventListener('focusin', giveTooltip);
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

    function setText(id, text) {
      const e = document.getElementById(id);
      if (e && e.textContent !== text) e.textContent = text;
    }

    // showSummary writes a job's state into the header: s has status and
    // version and, when known, settled, total, outstanding, updated,
    // failure, cancel (api.Summary, or what a step tells).
    function showSummary(s) {
      main.setAttribute('data-status', s.status);
      setState(document.getElementById('job-state'), s.status);
      setText('version', String(s.version));
      if (s.total !== undefined && s.settled !== undefined) {
        const bar = document.getElementById('progress-bar');
        if (bar) {
          bar.max = s.total;
          bar.value = s.settled;
          bar.textContent = s.settled + '/' + s.total;
        }
        setText('progress', s.settled + '/' + s.total);
      }
      if (s.outstanding !== undefined) setText('outstanding', String(s.outstanding));
      const upd = document.getElementById('updated');
      if (s.updated && upd) {
        const t = upd.querySelector('time');
        if (t) {
          t.setAttribute('datetime', s.updated);
          t.textContent = when(s.updated);
        } else {
          upd.replaceChildren(el('time', { datetime: s.updated }, when(s.updated)));
        }
      }
      const fail = document.getElementById('failure');
      if (fail && s.failure) {
        const f = s.failure;
        const q = new URLSearchParams({ node: f.path });
        if (st.viewing !== null) q.set('version', String(st.viewing));
        fail.replaceChildren('Failed at ', el('a', { href: jobPath + '?' + q }, el('code', { class: 'path' }, showPath(f.path))),
          f.action ? ' (action ' : '', f.action ? el('code', null, f.action) : '', f.action ? ')' : '',
          f.kind ? ', ' + f.kind : '', ': ', el('span', { class: 'message' }, f.message), f.clipped ? '…' : '',
          f.others ? ' ' : '', f.others ? el('span', { class: 'others' }, 'and ' + f.others + ' more failure' + (f.others > 1 ? 's' : '')) : '');
        fail.hidden = false;
      } else if (fail && s.id !== undefined) {
        fail.hidden = true; // a whole summary without a failure
      }
      const cancel = document.getElementById('cancel-reason');
      if (cancel && s.cancel) {
        cancel.replaceChildren('Cancelled: ', el('span', { class: 'reason' }, s.cancel.reason));
        cancel.hidden = false;
      } else if (cancel && s.id !== undefined) {
        cancel.hidden = true;
      }
      const running = s.status === 'running';
      for (const t of document.querySelectorAll('#duration time[data-start]')) {
        if (!running && !t.hasAttribute('data-end')) {
          const end = s.updated || new Date().toISOString();
          t.setAttribute('data-end', end);
          t.textContent = fmtDuration(Date.parse(end) - Date.parse(t.dataset.start));
        } else if (running && st.viewing === null && t.hasAttribute('data-end')) {
          t.removeAttribute('data-end');
        }
      }
      // The cancel form is for the live job: gone once it is cancelled or
      // settled (a past version shown meanwhile changes nothing here).
      const form = document.getElementById('cancel-form');
      if (form && st.viewing === null && (!running || s.cancel)) form.remove();
    }

    // ---- steps and the timeline ----------------------------------------

    // lastStep is the newest step listed, or to be listed: data-to
    // counts the steps the server left for lazySteps.
    function lastStep() {
      if (!stepsList) return 0;
      let v = Number(stepsList.dataset.to) || 0;
      for (const li of stepsList.querySelectorAll(':scope > li[data-version]')) v = Math.max(v, Number(li.dataset.version) || 0);
      return v;
    }

    function resultStatus(r) {
      if (r.timer) return 'timer';
      if (r.signal) return 'signal';
      if (r.node_cancel || r.kind === 'cancelled') return 'cancelled';
      return r.ok ? 'succeeded' : 'failed';
    }

    // stepItem makes the <li> of step s (api.Step) as the server renders
    // it (web.StepView): at most 20 results and 10 dispatched actions.
    function stepItem(s) {
      const li = el('li', { id: 'step-' + s.version, 'data-version': s.version, 'data-status': s.status, tabindex: '-1' });
      const head = el('p', { class: 'step-head' },
        el('a', { class: 'v', href: jobPath + '?version=' + s.version }, 'v' + s.version), ' ',
        s.time ? el('time', { datetime: s.time }, when(s.time)) : el('span', { class: 'muted' }, 'no time'),
        ' · ', stateSpan(s.status, true), ' · ' + s.settled + '/' + s.total + ' settled');
      if (s.created) head.append(' · ', el('strong', null, 'created'));
      li.append(head);
      if (s.cancel) li.append(el('p', { class: 'cancel' }, 'Cancel: ', el('span', { class: 'reason' }, s.cancel.reason)));
      const results = s.results || [];
      if (results.length) {
        const ul = el('ul', { class: 'results' });
        for (const r of results.slice(0, 20)) {
          const status = resultStatus(r);
          const code = el('code', null, r.action_id);
          const q = new URLSearchParams({ version: String(s.version), node: r.path });
          const linked = !r.timer && (!r.signal || r.signal.taken);
          const where = () => el('code', { class: 'where' }, showPath(r.path));
          let what = '';
          if (r.signal) {
            what = el('span', { class: 'signal' }, 'signal ', el('code', { class: 'name' }, r.signal.name),
              ' (id ', el('code', { class: 'id' }, r.signal.id), ') ',
              r.signal.taken ? 'taken by the wait at ' : r.signal.kept ? 'kept for a wait to come' : '', r.signal.taken ? where() : '');
          } else if (r.node_cancel) {
            what = el('span', { class: 'node-cancel' }, 'node ', el('code', { class: 'name' }, r.node_cancel.node),
              ' at ', where(), ' cancelled: ', el('span', { class: 'reason' }, r.node_cancel.reason));
          } else if (r.timer) {
            what = el('span', { class: 'timer' }, 'timer of ', where(), ' fired');
          }
          ul.append(el('li', { 'data-result-path': r.path, 'data-action': r.action || '', 'data-status': status },
            linked ? el('a', { href: jobPath + '?' + q }, code) : code,
            r.action ? ' ' : '', r.action ? el('code', { class: 'action' }, r.action) : '',
            ' ', stateSpan(status, true), what ? ' ' : '', what,
            r.error ? ': ' : '', r.error ? el('span', { class: 'error' }, r.error) : '',
            r.output ? ' → ' : '', r.output ? el('code', { class: 'output' }, r.output) : ''));
        }
        if (results.length > 20) ul.append(el('li', { class: 'more' }, 'and ' + (results.length - 20) + ' more results'));
        li.append(ul);
      }
      const grew = s.grew || [];
      if (grew.length) {
        const p = el('p', { class: 'grew' });
        grew.slice(0, 10).forEach((g, i) => {
          if (i) p.append('; ');
          const q = new URLSearchParams({ version: String(s.version), node: g.path });
          const text = g.kind === 'map' ? 'started ' + (g.copies || 0) + (g.copies === 1 ? ' copy' : ' copies') : 'began iteration ' + g.iteration;
          p.append(el('span', { class: 'growth', 'data-kind': g.kind }, g.kind + ' ',
            el('a', { href: jobPath + '?' + q }, el('code', { class: 'where' }, showPath(g.path))), ' ' + text));
        });
        if (grew.length > 10) p.append(' and ' + (grew.length - 10) + ' more');
        li.append(p);
      }
      const taken = s.taken || [];
      if (taken.length) {
        const p = el('p', { class: 'taken' }, 'Signals kept before, taken now: ');
        taken.forEach((t, i) => {
          if (i) p.append(', ');
          const q = new URLSearchParams({ version: String(s.version), node: t.path });
          p.append(el('span', { class: 'signal', 'data-signal': t.name }, 'signal ', el('code', { class: 'name' }, t.name),
            ' (id ', el('code', { class: 'id' }, t.id), ') by the wait at ',
            el('a', { href: jobPath + '?' + q }, el('code', { class: 'where' }, showPath(t.path)))));
        });
        li.append(p);
      }
      const disp = s.dispatched || [];
      if (disp.length) {
        const p = el('p', { class: 'dispatched' }, 'Dispatched: ');
        disp.slice(0, 10).forEach((d, i) => { if (i) p.append(', '); p.append(el('code', null, d)); });
        if (disp.length > 10) p.append(' and ' + (disp.length - 10) + ' more');
        li.append(p);
      }
      return li;
    }

    // addSteps appends the steps the list lacks, unless it shows an
    // earlier page of them (a "Later steps" link follows it).
    function addSteps(steps) {
      if (!stepsList || document.getElementById('steps-later')) return;
      let last = lastStep();
      for (const s of steps) {
        if (s.version <= last) continue;
        const li = stepItem(s);
        stepsList.append(li);
        last = s.version;
        filterOne(li);
      }
      stepsList.setAttribute('data-to', String(last));
    }

    // A step event says what each result was, not where a signal went
    // (the wait that took it, or kept), which node a cancel named, nor
    // what the step grew (a map's copies, a loop's next iteration): the
    // history route says it, read again for those steps, at most once a
    // second.
    const unsure = new Set();
    const reread = throttle(async () => {
      if (!unsure.size || !stepsList) return;
      const vs = Array.from(unsure).sort((a, b) => a - b);
      unsure.clear();
      const from = vs[0] - 1;
      const h = await getJSON(apiPath + '/history?from=' + from + '&limit=' + (vs[vs.length - 1] - from));
      for (const s of h.steps) {
        const old = document.getElementById('step-' + s.version);
        if (!old || !vs.includes(s.version) || old.parentNode !== stepsList) continue;
        const li = stepItem(s);
        if (old.hasAttribute('aria-current')) li.setAttribute('aria-current', 'step');
        old.replaceWith(li);
        filterOne(li);
      }
    }, 1000);

    // markUnsure notes the steps of an event whose items the history
    // route should say again (reread): those with a signal or a node's
    // cancel, a loop's later iteration, or a map or a wait among the
    // nodes they changed.
    function markUnsure(steps, changed) {
      // A map that started, or a wait that took a signal kept before.
      const grew = (changed || []).some((n) => n.kind === 'map' || n.kind === 'wait');
      for (const s of steps) {
        const special = (s.results || []).some((r) => r.signal || r.node_cancel);
        const loop = (s.dispatched || []).some((id) => /(^|\.)loop\[[1-9]\d*\]/.test(id));
        if (special || loop || grew) unsure.add(s.version);
      }
      if (unsure.size) reread();
    }

    // lazySteps lists the steps the server left out of the page
    // (data-lazy: the newest, data-from to data-to), read from the
    // history route once the tree and the timeline are drawn, before any
    // step a live update added meanwhile. On a failure the server's link
    // to them stays.
    async function lazySteps() {
      if (!stepsList || stepsList.dataset.lazy !== 'true') return;
      const from = Number(stepsList.dataset.from) || 0;
      const to = Number(stepsList.dataset.to) || 0;
      let got = [];
      try {
        for (let after = from - 1; after < to;) {
          const h = await getJSON(apiPath + '/history?from=' + after + '&limit=' + (to - after));
          const steps = (h.steps || []).filter((x) => x.version <= to);
          if (!steps.length) break;
          got = got.concat(steps);
          after = steps[steps.length - 1].version;
        }
      } catch (e) {
        return;
      }
      const frag = document.createDocumentFragment();
      for (const x of got) {
        if (!document.getElementById('step-' + x.version)) frag.append(stepItem(x));
      }
      stepsList.insertBefore(frag, stepsList.querySelector(':scope > li[data-version]'));
      stepsList.removeAttribute('data-lazy');
      const link = document.getElementById('steps-lazy');
      if (link) link.remove();
      for (const li of stepsList.querySelectorAll(':scope > li[data-version]')) filterOne(li);
      const top = stepsList.querySelector(':scope > li[data-version]');
      if (top && !stepsList.querySelector(':scope > li[tabindex="0"]')) top.setAttribute('tabindex', '0');
      markStep();
      const hash = /^#step-(\d+)$/.exec(location.hash);
      const li = hash && document.getElementById('step-' + hash[1]);
      if (li && li.scrollIntoView) li.scrollIntoView({ block: 'nearest' });
    }

    // fillSteps reads the history the list lacks, up to the job's newest
    // version (a snapshot or a long poll carries no steps).
    async function fillSteps() {
      if (!stepsList || document.getElementById('steps-later')) return;
      for (;;) {
        const from = lastStep();
        if (from >= st.latest) return;
        const h = await getJSON(apiPath + '/history?from=' + from + '&limit=1000');
        if (!h.steps.length) return;
        addSteps(h.steps);
        if (lastStep() <= from) return;
      }
    }

    // The timeline is drawn by the server: a running job's is read again
    // (the job's page, its timeline taken) at most every 2 s, or ten
    // times as long as the last read took (a big job's page costs the
    // server more), and not while the page is hidden; its scroll
    // position is kept.
    let timelineGap = 2000;
    let timelineMissed = false;
    const refreshTimeline = throttle(async () => {
      const box = document.querySelector('#timeline .timeline-scroll');
      if (!box) return;
      if (document.hidden) { timelineMissed = true; return; }
      const t0 = Date.now();
      const doc = parseHTML(await getText(jobPath));
      timelineGap = Math.max(2000, 10 * (Date.now() - t0));
      const fresh = doc.querySelector('#timeline .timeline-scroll');
      if (!fresh) return;
      const left = box.scrollLeft;
      const top = box.scrollTop;
      box.replaceChildren(...Array.from(fresh.childNodes, (n) => document.importNode(n, true)));
      box.scrollLeft = left;
      box.scrollTop = top;
      const n0 = document.querySelector('#timeline > p.note');
      const n1 = doc.querySelector('#timeline > p.note');
      if (n0 && n1) n0.replaceWith(document.importNode(n1, true));
      applyFilters();
      if (st.selected !== null && panel && !panel.hidden && st.viewing === null && st.nodes.has(st.selected)) fillPanel();
    }, () => timelineGap);
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden && timelineMissed) { timelineMissed = false; refreshTimeline(); }
    });

    function markStep() {
      const v = st.viewing;
      for (const e of document.querySelectorAll('#steps > li[aria-current]')) e.removeAttribute('aria-current');
      if (v === null) return;
      const li = document.getElementById('step-' + v);
      if (li) li.setAttribute('aria-current', 'step');
    }

    // ---- step filters ------------------------------------------------------

    const filters = document.getElementById('step-filters');
    const FILTERS = { status: 'steps_status', action: 'steps_action', path: 'steps_path' };
    let fv = { status: '', action: '', path: '' };

    function filterValues() {
      const get = (n) => {
        const e = filters && filters.querySelector('[name="' + n + '"]');
        return e ? String(e.value || '').trim() : '';
      };
      return { status: get(FILTERS.status), action: get(FILTERS.action), path: get(FILTERS.path) };
    }

    // matches says whether a step's <li> matches the filters, as the
    // server's StepFilter does: some result matches every filter given
    // ("cancel": the step applied a cancel); a path alone also matches
    // a dispatched action.
    function matches(li) {
      if (!fv.status && !fv.action && !fv.path) return true;
      if (fv.status === 'cancel') return !!li.querySelector(':scope > p.cancel');
      for (const r of li.querySelectorAll(':scope > ul.results > li[data-result-path]')) {
        const status = r.getAttribute('data-status');
        if (status === 'timer' || status === 'signal') continue;
        const p = r.getAttribute('data-result-path');
        const want = status === 'failed' || status === 'cancelled' ? 'failed' : 'succeeded';
        if ((!fv.status || fv.status === want) && (!fv.action || (r.getAttribute('data-action') || '').includes(fv.action)) &&
          (!fv.path || showPath(p).includes(fv.path) || p.includes(fv.path))) return true;
      }
      if (!fv.status && !fv.action && fv.path) {
        for (const c of li.querySelectorAll(':scope > p.dispatched > code')) {
          if (c.textContent.includes(fv.path)) return true;
        }
      }
      return false;
    }

    function filterOne(li) {
      const hide = !matches(li);
      if (li.hidden !== hide) li.hidden = hide;
    }

    function applyFilters() {
      fv = filterValues();
      setURL({ [FILTERS.status]: fv.status || null, [FILTERS.action]: fv.action || null, [FILTERS.path]: fv.path || null });
      if (!stepsList) return;
      for (const li of stepsList.querySelectorAll(':scope > li[data-version]')) filterOne(li);
      // The bars, a thousand on a big job's page: walked only when a path
      // filters them or did.
      if (!fv.path && !document.querySelector('#timeline rect.bar.filtered-out')) return;
      for (const b of document.querySelectorAll('#timeline rect.bar[data-path]')) {
        const p = b.getAttribute('data-path');
        const out = fv.path && !showPath(p).includes(fv.path) && !p.includes(fv.path);
        b.classList.toggle('filtered-out', !!out);
      }
    }

    // ---- time travel ---------------------------------------------------

    // versionLine writes the header's version: the version shown, and
    // when it is a past one, the newest and a way back to live.
    function versionLine() {
      const span = header && header.querySelector('.version');
      if (!span) return;
      const kids = ['version ', el('span', { id: 'version' }, String(st.viewing === null ? st.shown : st.viewing))];
      if (st.viewing !== null) {
        const back = el('a', { id: 'latest-link', href: jobPath }, 'show the job now');
        kids.push(' of ' + st.latest + ': a past version · ', back);
      }
      span.replaceChildren(...kids);
    }

    async function travelTo(v) {
      if (!(v > 0)) return;
      st.viewing = v;
      main.setAttribute('data-live', 'false');
      setURL({ version: v }, 'step-' + v);
      markStep();
      versionLine();
      let sum = null;
      readKept(v).catch(() => {});
      try {
        [sum] = await Promise.all([getJSON(apiPath + '?version=' + v + '&nodes=false'), redraw(v)]);
      } catch (e) {
        if (st.viewing === v) say('Could not show version ' + v + ': ' + e.message);
        return;
      }
      if (st.viewing !== v) return;
      showSummary(sum);
      versionLine();
      fillPanel();
    }

    async function backToLive() {
      st.viewing = null;
      setURL({ version: null }, '');
      markStep();
      readKept(null).catch(() => {});
      try {
        await redraw(null);
      } catch (e) {
        say('Could not show the job as it is now: ' + e.message);
        return;
      }
      if (st.viewing !== null) return;
      main.setAttribute('data-live', st.status === 'running' ? 'true' : 'false');
      if (st.summary) showSummary(st.summary);
      versionLine();
      fillSteps().catch(() => {});
      fillPanel();
    }

    // barTip gives a timeline bar its tooltip when it is first pointed
    // at or focused (the server draws none: web.Bar.Title, made here).
    function barTip(ev) {
      const b = ev.target.closest && ev.target.closest('rect.bar[data-path]');
      if (!b || b.querySelector('title')) return;
      const a = (n) => b.getAttribute('data-' + n) || '';
      let t = showPath(a('path')) + ' attempt ' + a('attempt') + ': dispatched at v' + a('version');
      if (Number(a('applied')) > 0) t += ', result at v' + a('applied');
      if (a('took')) t += ', ' + a('took');
      if (a('worker')) t += ', on ' + a('worker');
      const title = document.createElementNS(SVG_NS, 'title');
      title.textContent = t + ', ' + a('status');
      b.append(title);
    }

    function wireSteps() {
      if (!stepsList) return;
      // A step's link shows the tree at its version; a result's link
      // also selects the result's node.
      stepsList.addEventListener('click', (ev) => {
        const a = ev.target.closest('a');
        const li = ev.target.closest('#steps > li[data-version]');
        if (!li) return;
        const v = Number(li.dataset.version);
        if (a) {
          const u = new URL(a.href, location.href);
          if (u.pathname !== location.pathname || !u.searchParams.has('version')) return;
          ev.preventDefault();
          if (u.searchParams.has('node')) {
            st.selected = u.searchParams.get('node');
            markSelected();
            setURL({ node: st.selected });
          }
          travelTo(Number(u.searchParams.get('version')) || v);
          return;
        }
        if (window.getSelection && String(window.getSelection())) return; // selecting text
        travelTo(v);
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
      // A bar of the timeline selects its node and shows its step.
      const tl = document.getElementById('timeline');
      if (tl) {
        const pick = (b) => {
          const p = b.getAttribute('data-path');
          select(p, { scroll: true });
          const li = document.getElementById('step-' + b.getAttribute('data-version'));
          if (li && li.scrollIntoView) li.scrollIntoView({ block: 'nearest' });
        };
        tl.addEventListener('pointerover', barTip);
        tl.addEventListener('focusin', barTip);
        tl.addEventListener('click', (ev) => {
          const b = ev.target.closest('rect.bar[data-path]');
          if (b) { ev.preventDefault(); pick(b); }
        });
        tl.addEventListener('keydown', (ev) => {
          const b = ev.target.closest && ev.target.closest('rect.bar[data-path]');
          if (!b) return;
          if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pick(b); return; }
          // The timeline is one tab stop: the arrows, Home and End move
          // the focus (and the stop) along the bars shown.
          const bars = [...tl.querySelectorAll('rect.bar[data-path]:not(.filtered-out)')];
          const i = bars.indexOf(b);
          let next = null;
          if (ev.key === 'ArrowRight' || ev.key === 'ArrowDown') next = bars[i + 1];
          else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowUp') next = bars[i - 1];
          else if (ev.key === 'Home') next = bars[0];
          else if (ev.key === 'End') next = bars[bars.length - 1];
          else return;
          ev.preventDefault();
          if (!next || next === b) return;
          b.setAttribute('tabindex', '-1');
          next.setAttribute('tabindex', '0');
          next.focus();
        });
      }
      // The header's "show the job now" comes back to live in place.
      main.addEventListener('click', (ev) => {
        const a = ev.target.closest('#latest-link');
        if (!a) return;
        ev.preventDefault();
        backToLive();
      });
      // The tree's note links the closed groups: open them in place.
      main.addEventListener('click', (ev) => {
        const a = ev.target.closest('a.expand[data-group-path]');
        if (!a) return;
        ev.preventDefault();
        expand(a.getAttribute('data-group-path'));
      });
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

    // ---- the kept signals -------------------------------------------------

    // The signals the job keeps (section#signals) are the server's: its
    // page of them (/jobs/{id}/signals, web.SignalsView) is read again
    // when a step applies a signal, or may have let a wait take one (any
    // step while some are kept), on a snapshot, at the end, and at the
    // version travelled to. A row still kept stays as it is (a payload
    // shown whole stays whole), new rows come in the job's order, those
    // taken go.
    const keptBox = document.getElementById('signals');
    let keptTicket = 0;

    function keptKey(li) { return li.getAttribute('data-name') + '/' + li.getAttribute('data-id'); }

    function keptRows(root) { return Array.from(root.querySelectorAll('li[data-name]')); }

    // showKept puts the rows of fresh (the server's section#signals) in
    // the page's.
    function showKept(fresh) {
      if (!keptBox || !fresh) return;
      const old = new Map(keptRows(keptBox).map((li) => [keptKey(li), li]));
      const rows = keptRows(fresh).map((li) => old.get(keptKey(li)) || document.importNode(li, true));
      let ol = document.getElementById('kept');
      if (rows.length && !ol) {
        ol = el('ol', { id: 'kept' });
        keptBox.append(ol);
      }
      if (ol && rows.length) ol.replaceChildren(...rows); else if (ol) ol.remove();
      const none = document.getElementById('signals-none');
      if (none) none.hidden = rows.length > 0;
    }

    // keptURL is the server's page of the signals kept at version v
    // (null: now), with the one of key ("NAME/ID") whole.
    function keptURL(v, key) {
      const q = new URLSearchParams();
      if (key) q.set('full', key);
      if (v !== null) q.set('version', String(v));
      const qs = q.toString();
      return jobPath + '/signals' + (qs ? '?' + qs : '');
    }

    // readKept shows the signals kept at version v (null: now), unless
    // the page has moved to another version meanwhile.
    async function readKept(v) {
      if (!keptBox) return;
      const ticket = ++keptTicket;
      const doc = parseHTML(await getText(keptURL(v)));
      if (ticket !== keptTicket || st.viewing !== v) return;
      showKept(doc.getElementById('signals'));
    }

    const refreshKept = throttle(async () => {
      if (st.viewing === null) await readKept(null);
    }, 1000);

    // keptMoved says whether steps may have changed the signals kept:
    // one applies a signal, or some are kept (a wait may take one).
    function keptMoved(steps) {
      if (keptBox && keptBox.querySelector('li[data-name]')) return steps.length > 0;
      return steps.some((s) => (s.results || []).some((r) => r.signal));
    }

    function wireKept() {
      if (!keptBox) return;
      // "show all" reads the payload whole at the version shown, in place.
      keptBox.addEventListener('click', async (ev) => {
        const a = ev.target.closest('a.show-all');
        const li = a && a.closest('li[data-name]');
        if (!li) return;
        ev.preventDefault();
        const key = keptKey(li);
        const pre = li.querySelector('.payload');
        const note = a.closest('.clipped') || a;
        try {
          const doc = parseHTML(await getText(keptURL(st.viewing, key)));
          const row = keptRows(doc).find((r) => keptKey(r) === key);
          const whole = row && !row.querySelector('a.show-all') ? row.querySelector('.payload') : null;
          if (!whole || !pre) {
            note.replaceWith(el('span', { class: 'clipped' }, 'No longer kept: a wait took it.'));
            return;
          }
          pre.textContent = whole.textContent;
          note.remove();
        } catch (e) {
          if (!(e instanceof HTTPError && e.status === 401)) say('Could not read the signal: ' + e.message);
        }
      });
    }

    // ---- live: the stream, its fallback, and what they bring --------------

    const conn = { es: null, got: false, failures: 0, delay: 0, timer: null, stopped: false };

    function onSteps(data, v) {
      const steps = data.steps || [];
      for (const n of data.changed || []) st.nodes.set(n.path, { node: n, v });
      const lastS = steps[steps.length - 1];
      setLatest(Math.max(st.latest, v || (lastS ? lastS.version : 0)));
      addSteps(steps);
      markUnsure(steps, data.changed);
      if (lastS) {
        st.status = lastS.status;
        st.summary = Object.assign({}, st.summary || {}, {
          status: lastS.status, version: lastS.version, settled: lastS.settled, total: lastS.total,
          updated: lastS.time || (st.summary && st.summary.updated),
        });
        if (lastS.failure) st.summary.failure = lastS.failure;
        if (lastS.cancel) st.summary.cancel = lastS.cancel;
        // A step tells no failure; the root's, once the job has failed,
        // is the job's: the header says it with the states that show it.
        const root = (data.changed || []).find((n) => n.path === '');
        if (lastS.status === 'failed' && root && root.failure) st.summary.failure = root.failure;
      }
      if (st.viewing === null) {
        let hidden = false;
        for (const n of data.changed || []) {
          const g = nodeEls.get(n.path);
          if (g) paint(g, n); else hidden = true;
        }
        // A group's counts move with the nodes under it, a map's copies
        // with the nodes in them.
        for (const n of data.changed || []) {
          const up = parentPath(n.path);
          const a = up === null ? null : drawnAncestor(up);
          if (a && a.classList.contains('group')) hidden = true;
          if (/(^|\.)map\[\d+\]/.test(n.path)) hidden = true;
        }
        // A loop's next iteration may begin in the very state the last
        // one began in (no node changed): its actions name its body.
        for (const s of steps) {
          for (const id of s.dispatched || []) {
            const i = id.lastIndexOf('#');
            if (i >= 0 && !nodeEls.has(id.slice(0, i)) && /(^|\.)loop\[\d+\]/.test(id)) hidden = true;
          }
        }
        if (hidden) staleGroups();
        if (keptMoved(steps)) refreshKept();
        if (st.summary) showSummary(st.summary);
        setShown(st.latest, st.status);
        if (st.selected !== null && (data.changed || []).some((n) => n.path === st.selected)) fillPanel();
      } else {
        versionLine();
      }
      refreshTimeline();
    }

    // setLatest records the newest version of the job the page knows.
    function setLatest(v) {
      st.latest = v;
      main.setAttribute('data-latest', String(v));
    }

    function onSnapshot(j, v) {
      setLatest(v || j.version);
      st.status = j.status;
      st.summary = j;
      for (const n of j.nodes || []) st.nodes.set(n.path, { node: n, v: st.latest });
      if (st.viewing === null) {
        for (const n of j.nodes || []) {
          const g = nodeEls.get(n.path);
          if (g) paint(g, n);
        }
        if (svg && svg.querySelector('g.node.group')) staleGroups();
        refreshKept();
        showSummary(j);
        setShown(st.latest, st.status);
        if (st.selected !== null) fillPanel();
      }
      fillSteps().catch(() => {});
      refreshTimeline();
    }

    function onEnd(s) {
      stop();
      st.status = s.status;
      st.summary = Object.assign({}, st.summary || {}, s);
      setLatest(Math.max(st.latest, s.version));
      if (st.viewing === null) {
        main.setAttribute('data-live', 'false');
        showSummary(st.summary);
      }
      unsay();
      // The end may follow steps the page has not drawn (a snapshot does
      // not carry the steps): bring the list and the drawing up to it.
      fillSteps().catch(() => {});
      if (st.viewing === null && st.shown < st.latest) redraw(null).catch(() => {});
      refreshKept();
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
      if (conn.failures >= 2) { poll(); return; }
      connect();
    }

    // catchUp brings the page to version v of the live job without the
    // stream: the steps from the history, the nodes from a fragment.
    async function catchUp(v) {
      if (v <= st.latest) return;
      setLatest(v);
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
        setLatest(lastS.version);
        st.status = lastS.status;
        st.summary = Object.assign({}, st.summary || {}, {
          status: lastS.status, version: lastS.version, settled: lastS.settled, total: lastS.total, updated: lastS.time,
        });
        if (lastS.failure) st.summary.failure = lastS.failure;
        if (lastS.cancel) st.summary.cancel = lastS.cancel;
        if (st.viewing === null) {
          try { await redraw(null); } catch (e) { /* the next poll draws */ }
          if (keptMoved(steps)) refreshKept();
          showSummary(st.summary);
          setShown(st.latest, st.status);
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
    wirePanel();
    wireSteps();
    wireCancel();
    wireKept();
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
    lazySteps();
    const hash = /^#step-(\d+)$/.exec(location.hash);
    if (hash && Number(hash[1]) !== st.viewing) travelTo(Number(hash[1]));
    if (st.viewing === null) {
      if (st.status === 'running') connect();
      else stop();
    } else {
      // A past version is shown: learn the newest before following it.
      getJSON(apiPath + '?nodes=false').then((s) => {
        setLatest(s.version);
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
      for (const sel of ['#counts', 'nav.pager']) {
        const a = document.querySelector(sel);
        const b = doc.querySelector(sel);
        if (a && b) a.replaceWith(document.importNode(b, true));
      }
      tick();
    }, 1000);

    let es = null;
    let failures = 0;
    let opened = 0;
    const open = () => {
      es = new EventSource('/api/v1/events');
      // A stream opened again may have missed changes: read the page again.
      es.addEventListener('open', () => {
        failures = 0;
        if (!loginGone) unsay();
        if (opened++) refresh();
      });
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
            tr.setAttribute('data-version', String(c.version));
            for (const e of tr.querySelectorAll('.state[data-status]')) setState(e, c.status);
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
    const result = document.getElementById('check-result');
    const preview = document.getElementById('preview');
    const idInput = document.getElementById('job-id');
    const form = area.form;
    let ticket = 0;
    let timer = null;

    function showProblems(list, message) {
      if (problems) {
        problems.replaceChildren(...list.map((p) => {
          const li = el('li', { 'data-problem-path': p.path === undefined ? '' : p.path });
          if (p.path !== undefined) li.append(el('code', { class: 'path' }, showPath(p.path)), ': ');
          li.append(el('span', { class: 'message' }, p.message));
          return li;
        }));
      }
      if (result) result.textContent = message;
      area.setAttribute('aria-invalid', list.length ? 'true' : 'false');
    }

    function showUnknown(names) {
      let p = document.getElementById('unknown-actions');
      if (!names.length) { if (p) p.remove(); return; }
      if (!p && problems) {
        p = el('p', { id: 'unknown-actions' });
        problems.after(p);
      }
      if (!p) return;
      p.replaceChildren('No worker runs: ');
      names.forEach((a, i) => { if (i) p.append(', '); p.append(el('code', null, a)); });
    }

    // drawPreview draws the workflow the server drew for the form (a
    // check posted to /new), else a plain list of its nodes.
    async function drawPreview(mine, text, nodes) {
      if (!preview) return;
      try {
        const body = new URLSearchParams({ workflow: text, do: 'check' });
        if (idInput) body.set('id', idInput.value);
        const doc = parseHTML(await getText('/new', { method: 'POST', body }));
        const fresh = doc.getElementById('preview');
        if (mine !== ticket) return;
        if (fresh && fresh.querySelector('svg')) {
          for (const e of fresh.querySelectorAll('style, script')) e.remove();
          preview.replaceChildren(...Array.from(fresh.childNodes, (n) => document.importNode(n, true)));
          preview.removeAttribute('data-stale');
          return;
        }
      } catch (e) {
        if (mine !== ticket) return;
      }
      drawNodes(nodes);
    }

    function drawNodes(nodes) {
      const max = 2000;
      const ul = el('ul', { class: 'preview-nodes' });
      for (const n of nodes.slice(0, max)) {
        ul.append(el('li', { 'data-path': n.path, 'data-status': 'idle', 'data-kind': n.kind, 'data-depth': n.depth },
          el('code', { class: 'path' }, showPath(n.path)), ' ', n.kind, n.action ? ' ' : '', n.action ? el('code', null, n.action) : '',
          n.name ? ' (' + n.name + ')' : '', n.payload ? ' ' + clip(n.payload, 40) : ''));
      }
      if (nodes.length > max) ul.append(el('li', { class: 'more' }, (nodes.length - max) + ' more nodes'));
      preview.replaceChildren(ul);
      preview.removeAttribute('data-stale');
    }

    async function validate() {
      const text = area.value;
      const mine = ++ticket;
      if (!text.trim()) {
        showProblems([], 'Not checked yet.');
        showUnknown([]);
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
        if (mine === ticket) showProblems([], 'The server does not answer: ' + e.message);
        return;
      }
      let body = null;
      try { body = await r.json(); } catch (e) { body = null; }
      if (mine !== ticket) return;
      if (r.status === 401) { loginExpired(); return; }
      if (r.ok && body) {
        const unknown = body.unknown_actions || [];
        const list = [];
        for (const n of body.nodes || []) {
          if (n.action && unknown.includes(n.action)) list.push({ path: n.path, message: 'no worker runs action ' + JSON.stringify(n.action) });
        }
        const count = (body.nodes || []).length;
        showProblems(list, unknown.length ? 'Valid, but no worker runs ' + unknown.join(', ') + '.' : 'Valid: ' + count + ' node' + (count === 1 ? '' : 's') + '.');
        showUnknown(unknown);
        drawPreview(mine, text, body.nodes || []);
        return;
      }
      const ps = body && Array.isArray(body.problems) ? body.problems : [];
      showProblems(ps, (body && (body.detail || body.title)) || 'HTTP ' + r.status);
      showUnknown([]);
      if (preview) preview.setAttribute('data-stale', 'true');
    }

    function soon() {
      clearTimeout(timer);
      timer = setTimeout(validate, 300);
    }

    area.addEventListener('input', soon);
    const upload = document.getElementById('workflow-file');
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
        const by = ev.submitter;
        ev.preventDefault();
        if (!by || by.value !== 'submit') { clearTimeout(timer); validate(); return; }
        const id = idInput ? idInput.value.trim() : '';
        by.disabled = true;
        try {
          const r = await request('/api/v1/jobs' + (id ? '?id=' + encodeURIComponent(id) : ''), {
            method: 'POST', body: area.value,
            headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          });
          const s = await r.json();
          location.assign('/jobs/' + encodeURIComponent(s.id));
        } catch (e) {
          by.disabled = false;
          if (e instanceof HTTPError && e.status === 401) return;
          const p = e.problem;
          showProblems(p && Array.isArray(p.problems) ? p.problems : [], e.message);
        }
      });
    }
    if (area.value.trim() && !(result && problems && problems.childElementCount)) soon();
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
