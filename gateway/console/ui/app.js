// beangate console: a single page over /api/ (see gateway/console). No framework, nothing
// loaded from elsewhere. Routes: #/ (tubes), #/tube/NAME?state=S (its jobs), #/job/ID.
//
// Each view's frame is built once, when the route moves to it; a refresh then writes only the
// cells that changed and adds or removes only the rows that came or went. A node the user is
// about to click, type into or select in is never replaced under them.
'use strict';

const S = { info: null, live: true, timer: null, cursors: [''], preview: 'text', view: '', seq: 0, drawn: 0, next: '', job: null };
const $ = (sel, root = document) => root.querySelector(sel);
const esc = s => String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const fmtSecs = s => s >= 3600 ? (s / 3600).toFixed(1) + 'h' : s >= 60 ? (s / 60).toFixed(1) + 'm' : s.toFixed(0) + 's';
// fmtShort is fmtSecs keeping a fraction of a second under a minute (a retry delay of 0.5 s).
const fmtShort = s => s >= 60 ? fmtSecs(s) : +s.toFixed(3) + 's';
const rate = r => r >= 10 ? r.toFixed(0) : r.toFixed(1);

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': S.info ? S.info.csrf : '' },
  };
  // From the origin, not relative to the page: opened as http://user:password@host/ui/, a
  // relative URL would carry the credentials, and fetch refuses such a URL.
  const r = await fetch(location.origin + '/api/' + path, opts);
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw Object.assign(new Error(data.error || r.statusText), { status: r.status });
  return data;
}

function say(text, error) {
  const m = $('#msg');
  m.textContent = text;
  m.className = error ? 'error' : '';
}

// ---- writing in place ----

// setText writes el's text only when it differs: an unchanged cell is left alone.
function setText(el, text) {
  text = String(text);
  if (el.textContent !== text) el.textContent = text;
}

function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

function setClass(el, name, on) {
  if (el.classList.contains(name) !== on) el.classList.toggle(name, on);
}

// element makes a node from markup (built from escaped values only).
function element(html) {
  const t = document.createElement('template');
  t.innerHTML = html.trim();
  return t.content.firstElementChild;
}

// syncRows makes tbody's rows those of items, in their order. Rows are keyed by key(item): a row
// whose key is still there keeps its node and update writes its changed cells; rows for new
// keys are made by make; rows whose key is gone are removed.
function syncRows(tbody, items, key, make, update) {
  const old = new Map();
  for (const tr of tbody.rows) old.set(tr.dataset.key, tr);
  let at = tbody.firstElementChild;
  for (const item of items) {
    const k = String(key(item));
    let tr = old.get(k);
    if (tr) {
      old.delete(k);
    } else {
      tr = make(item);
      tr.dataset.key = k;
    }
    update(tr, item);
    if (tr === at) at = at.nextElementSibling;
    else tbody.insertBefore(tr, at);
  }
  for (const tr of old.values()) tr.remove();
}

// setPaused keeps a "paused Ns" mark in parent while secs > 0, and none otherwise.
function setPaused(parent, secs, id) {
  let mark = parent.querySelector(':scope > .paused');
  if (secs > 0) {
    if (!mark) {
      mark = element(`<span class="paused"></span>`);
      if (id) mark.id = id;
      parent.append(mark);
    }
    setText(mark, 'paused ' + fmtSecs(secs));
  } else if (mark) {
    mark.remove();
  }
}

// confirmThen asks before a destructive action.
function confirmThen(text) {
  return new Promise(resolve => {
    const d = $('#confirm');
    $('#confirm-text').textContent = text;
    d.onclose = () => resolve(d.returnValue === 'yes');
    d.returnValue = '';
    d.showModal();
  });
}

async function act(path, body, question) {
  if (question && !(await confirmThen(question))) return;
  try {
    const r = await api(path, body);
    say(path + ': done' + (r.n !== undefined ? ' (' + r.n + ')' : '') + (r.id ? ', job ' + r.id : ''));
    await refresh();
  } catch (e) {
    say(path + ': ' + e.message, true);
  }
}

function route() {
  const h = decodeURIComponent(location.hash.slice(1) || '/');
  let m;
  if ((m = h.match(/^\/tube\/(.+?)(?:\?state=(\w+))?$/))) return { view: 'tube', tube: m[1], state: m[2] || 'ready' };
  if ((m = h.match(/^\/job\/(\d+)$/))) return { view: 'job', id: m[1] };
  return { view: 'overview' };
}

// frameKey names the frame a route draws into: the same tube's state tabs share one, so the
// action forms keep what was typed in them.
function frameKey(r) {
  return r.view === 'tube' ? 'tube:' + r.tube : r.view === 'job' ? 'job:' + r.id : r.view;
}

// frame builds the view's frame from html unless it is already the one shown, and reports
// whether it was built (for the caller to bind its handlers once).
function frame(r, html) {
  const key = frameKey(r);
  if (S.view === key) return false;
  $('#view').innerHTML = html;
  S.view = key;
  return true;
}

// actionsOff says, where the actions would be, that they are unavailable and why.
function actionsOff() {
  return `<p class="notice" id="actions-off">Actions (kick, delete, flush, pause, move, put, policy) are unavailable: ${esc(S.info.read_only_reason || 'the console is read-only')}.</p>`;
}

function previewOf(b64, mode, size) {
  const bytes = Uint8Array.from(atob(b64 || ''), c => c.charCodeAt(0));
  let out;
  if (mode === 'hex') {
    out = Array.from(bytes, b => b.toString(16).padStart(2, '0')).join(' ');
  } else {
    out = new TextDecoder().decode(bytes);
    if (mode === 'json') {
      try { out = JSON.stringify(JSON.parse(out), null, 2); } catch (e) { out = '(not JSON) ' + out; }
    }
  }
  return out + (size > bytes.length ? ' …' : '');
}

const previewSelect = `<select id="preview-mode"><option>text</option><option>hex</option><option>json</option></select>`;

function bindPreviewMode() {
  const sel = $('#preview-mode');
  sel.value = S.preview;
  sel.onchange = () => { S.preview = sel.value; refresh(); };
}

// ---- overview ----

const tubeColumns = ['ready', 'urgent', 'reserved', 'delayed', 'buried', 'total', 'puts', 'deletes', 'watching', 'waiting'];

function tubeRow(t) {
  const tr = element(`<tr><td class="name"><a href="#/tube/${encodeURIComponent(t.name)}">${esc(t.name)}</a></td>
    ${tubeColumns.map(c => `<td class="num ${c}"></td>`).join('')}</tr>`);
  tr.dataset.tube = t.name;
  return tr;
}

function updateTubeRow(tr, t) {
  const values = { ...t, puts: rate(t.puts_per_sec), deletes: rate(t.deletes_per_sec) };
  for (const c of tubeColumns) setText(tr.querySelector('.' + c), values[c]);
  setPaused(tr.querySelector('.name'), t.pause_left);
}

async function loadOverview() {
  const [ov, sc] = await Promise.all([api('overview'), api('schedules').catch(() => null)]);
  return { ov, sc };
}

// ---- schedules ----

const scheduleColumns = ['tube', 'when', 'last-run', 'last-job', 'next-run'];

function scheduleRow(s) {
  return element(`<tr><td class="name">${esc(s.name)}</td>${scheduleColumns.map(c => `<td class="${c}"></td>`).join('')}</tr>`);
}

// fmtTime is an RFC 3339 time from the API in UTC, to the second.
const fmtTime = t => t ? t.replace(/\.\d+/, '').replace('T', ' ').replace('Z', ' UTC') : '—';

function updateScheduleRow(tr, s) {
  const when = s.cron ? s.cron + (s.timezone ? ' (' + s.timezone + ')' : ' (UTC)') : 'every ' + fmtShort(s.every);
  const values = { tube: s.tube, when, 'last-run': fmtTime(s.last_run), 'last-job': s.last_job || '—', 'next-run': fmtTime(s.next_run) };
  for (const c of scheduleColumns) setText(tr.querySelector('.' + c), values[c]);
}

function drawOverview(r, { ov, sc }) {
  frame(r, `
    <h1>Tubes</h1>
    <div class="bar muted" id="totals"></div>
    <table id="tubes"><thead><tr><th>tube</th><th class="num">ready</th><th class="num">urgent</th>
      <th class="num">reserved</th><th class="num">delayed</th><th class="num">buried</th><th class="num" title="jobs put into the tube since start (stats-tube total-jobs)">total jobs</th>
      <th class="num">puts/s</th><th class="num">deletes/s</th><th class="num">watching</th><th class="num">waiting</th></tr></thead>
      <tbody></tbody></table>
    <p class="muted" id="truncated" hidden>More tubes exist than are shown.</p>
    <h2>Schedules</h2>
    <table id="schedules"><thead><tr><th>schedule</th><th>tube</th><th>when</th><th>last run</th>
      <th>last job</th><th>next run</th></tr></thead><tbody></tbody></table>
    <p class="muted" id="no-schedules" hidden>No schedules (see docs/schedules.md).</p>`);
  setText($('#totals'), `ready ${ov.ready} · reserved ${ov.reserved} · delayed ${ov.delayed} · buried ${ov.buried} · put since start ${ov.total}`);
  syncRows($('#tubes tbody'), ov.tubes || [], t => t.name, tubeRow, updateTubeRow);
  $('#truncated').hidden = !ov.truncated;
  const schedules = (sc && sc.schedules) || [];
  syncRows($('#schedules tbody'), schedules, s => s.name, scheduleRow, updateScheduleRow);
  $('#no-schedules').hidden = schedules.length > 0;
}

// ---- tube ----

// A chart's plot area sits right of the value axis and above the time axis.
const chartW = 360, chartH = 100, padL = 34, padB = 14, padT = 6;
const svgNS = 'http://www.w3.org/2000/svg';

function chartNode(title) {
  return element(`<div class="chart"><div class="title"></div>
    <svg width="${chartW}" height="${chartH}" viewBox="0 0 ${chartW} ${chartH}" role="img" aria-label="${esc(title)}">
      <line class="axis" x1="${padL}" y1="${padT}" x2="${padL}" y2="${chartH - padB}"/>
      <line class="axis" x1="${padL}" y1="${chartH - padB}" x2="${chartW}" y2="${chartH - padB}"/>
      <text class="y-top" x="${padL - 3}" y="${padT + 8}" text-anchor="end"></text>
      <text class="y-zero" x="${padL - 3}" y="${chartH - padB}" text-anchor="end">0</text>
      <text class="x-start" x="${padL}" y="${chartH - 2}"></text>
      <text class="x-end" x="${chartW}" y="${chartH - 2}" text-anchor="end"></text>
      <text class="empty" x="${(padL + chartW) / 2}" y="${(padT + chartH - padB) / 2}" text-anchor="middle">no data yet</text>
      <polyline/></svg></div>`);
}

// updateChart draws values, one a second, the last one at end (a Date): the value axis goes from
// 0 to the largest value, the time axis from the first sample's clock time to the last's. Until
// there are two samples there is no line to draw, and the chart says so.
function updateChart(node, title, values, end) {
  const n = values.length, max = n ? Math.max(...values) : 0, top = Math.max(1, max);
  const empty = n < 2;
  setText(node.querySelector('.title'), empty ? `${title} · no data yet` : `${title} · now ${values[n - 1]} · max ${max} · last ${n}s`);
  node.querySelector('.empty').style.display = empty ? '' : 'none';
  setText(node.querySelector('.y-top'), empty ? '' : String(max));
  const clock = d => d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  setText(node.querySelector('.x-start'), empty ? '' : clock(new Date(end.getTime() - (n - 1) * 1000)));
  setText(node.querySelector('.x-end'), empty ? '' : clock(end));
  const w = chartW - padL, h = chartH - padB - padT;
  const pts = empty ? '' : values.map((v, i) => `${(padL + i * w / (n - 1)).toFixed(1)},${(padT + h - v * h / top).toFixed(1)}`).join(' ');
  setAttr(node.querySelector('polyline'), 'points', pts);
}

function tubeActions(t) {
  if (S.info.read_only) return actionsOff();
  return `<div class="actions">
    <div class="bar">
      <label>kick <input id="kick-n" type="number" min="1" value="10" size="6"></label><button id="kick">Kick</button>
      <label>pause <input id="pause-s" type="number" min="1" value="60" size="6">s</label><button id="pause">Pause</button>
      <button id="unpause">Unpause</button>
    </div>
    <div class="bar">
      <select id="flush-state"><option value="">ready, delayed and buried</option><option>ready</option><option>delayed</option><option>buried</option></select>
      <button id="flush" class="danger">Flush</button>
      <label>move to <input id="move-to" placeholder="tube"></label>
      <select id="move-state"><option value="">ready, delayed and buried</option><option>ready</option><option>delayed</option><option>buried</option></select>
      <button id="move" class="danger">Move</button>
    </div>
    <div class="bar">
      <textarea id="put-body" rows="2" cols="40" placeholder="job body"></textarea>
      <label>pri <input id="put-pri" type="number" min="0" value="1024" size="8"></label>
      <label>delay <input id="put-delay" type="number" min="0" value="0" size="5"></label>
      <label>ttr <input id="put-ttr" type="number" min="1" value="60" size="5"></label>
      <button id="put">Put into ${esc(t)}</button>
    </div>
    <div class="bar" id="policy-form">
      <span class="muted">policy of ${esc(t)}:</span>
      <label>max reserves <input id="pol-max-reserves" type="number" min="0" size="5"></label>
      <label>retry delay <input id="pol-retry-delay" type="number" min="0" step="any" size="5">s</label>
      <label>up to <input id="pol-retry-delay-max" type="number" min="0" step="any" size="6">s</label>
      <label>expire after <input id="pol-expire-after" type="number" min="0" size="6">s</label>
      <select id="pol-expire-action"><option value="">then delete</option><option value="bury">then bury</option></select>
      <label>max reserved <input id="pol-max-reserved" type="number" min="0" size="5"></label>
      <label>rate <input id="pol-rate" type="number" min="0" step="any" size="5">/s</label>
      <label>burst <input id="pol-burst" type="number" min="0" size="5"></label>
      <label><input id="pol-unique" type="checkbox"> unique</label>
      <label><input id="pol-history" type="checkbox"> job history</label>
      <button id="pol-set">Set policy</button>
      <button id="pol-clear" class="danger">Clear policy</button>
    </div></div>`;
}

// describePolicy is a policy in the ctl flags' words.
function describePolicy(p) {
  const parts = [];
  if (p.max_reserves) parts.push('max reserves ' + p.max_reserves);
  if (p.retry_delay) parts.push('retry delay ' + fmtShort(p.retry_delay) + ' doubling' + (p.retry_delay_max ? ' up to ' + fmtShort(p.retry_delay_max) : ''));
  if (p.expire_after) parts.push(`expire after ${fmtSecs(p.expire_after)} then ${p.expire_action || 'delete'}`);
  if (p.max_reserved) parts.push('max reserved ' + p.max_reserved);
  if (p.rate) parts.push(`rate ${p.rate}/s burst ${p.burst || 1}`);
  if (p.unique) parts.push('unique');
  if (p.history) parts.push('job history');
  return parts.length ? parts.join(' · ') : 'no limits';
}

// policyText says what governs the tube: its own policy, a glob's, or none.
function policyText(name, pol) {
  if (!pol) return 'policies: not available with this store';
  const g = pol.governing;
  if (!g) return 'policy: none';
  return 'policy' + (g.tube === name ? '' : ' (from ' + g.tube + ')') + ': ' + describePolicy(g);
}

// fillPolicyForm shows the policy that governs the tube, as a start for editing it.
function fillPolicyForm(pol) {
  if (!$('#policy-form')) return;
  $('#policy-form').hidden = !pol;
  const p = (pol && pol.governing) || {};
  $('#pol-max-reserves').value = p.max_reserves || '';
  $('#pol-retry-delay').value = p.retry_delay || '';
  $('#pol-retry-delay-max').value = p.retry_delay_max || '';
  $('#pol-expire-after').value = p.expire_after || '';
  $('#pol-expire-action').value = p.expire_action || '';
  $('#pol-max-reserved').value = p.max_reserved || '';
  $('#pol-rate').value = p.rate || '';
  $('#pol-burst').value = p.burst || '';
  $('#pol-unique').checked = !!p.unique;
  $('#pol-history').checked = !!p.history;
}

function bindTubeActions(name) {
  if (S.info.read_only) return;
  const num = id => Number($(id).value);
  $('#kick').onclick = () => act('kick', { tube: name, bound: num('#kick-n') });
  $('#pause').onclick = () => act('pause', { tube: name, seconds: num('#pause-s') });
  $('#unpause').onclick = () => act('pause', { tube: name, seconds: 0 });
  $('#flush').onclick = () => {
    const st = $('#flush-state').value;
    act('flush', { tube: name, state: st }, `Delete every ${st || 'ready, delayed and buried'} job of ${name}?`);
  };
  $('#move').onclick = () => {
    const to = $('#move-to').value.trim(), st = $('#move-state').value;
    if (!to) return say('move: name the tube to move to', true);
    act('move', { tube: name, to, state: st }, `Move every ${st || 'ready, delayed and buried'} job of ${name} to ${to}?`);
  };
  $('#put').onclick = () => act('put', { tube: name, body: $('#put-body').value, pri: num('#put-pri'), delay: num('#put-delay'), ttr: num('#put-ttr') });
  $('#pol-set').onclick = () => {
    const policy = {
      tube: name, max_reserves: num('#pol-max-reserves'), retry_delay: num('#pol-retry-delay'),
      retry_delay_max: num('#pol-retry-delay-max'), expire_after: num('#pol-expire-after'),
      max_reserved: num('#pol-max-reserved'), rate: num('#pol-rate'), burst: num('#pol-burst'),
      unique: $('#pol-unique').checked, history: $('#pol-history').checked,
    };
    if (policy.expire_after) policy.expire_action = $('#pol-expire-action').value;
    act('policy', { tube: name, policy });
  };
  $('#pol-clear').onclick = () => act('policy-clear', { tube: name }, `Clear the policy set for ${name}?`);
}

// jobButtons is what a job in state allows: kick if buried or delayed, delete unless reserved.
// kick and del are the buttons' attributes.
function jobButtons(state, kick, del) {
  if (S.info.read_only) return '';
  return (state === 'buried' || state === 'delayed' ? `<button ${kick}>Kick</button> ` : '') +
    (state === 'reserved' ? '' : `<button ${del}>Delete</button>`);
}

function jobRow(j) {
  const tr = element(`<tr><td><a href="#/job/${j.id}">${j.id}</a></td><td class="num pri"></td><td class="num age"></td>
    <td class="num left"></td><td class="num size"></td><td><div class="preview"></div></td><td class="acts"></td></tr>`);
  tr.dataset.id = j.id;
  return tr;
}

function updateJobRow(tr, j) {
  setText(tr.querySelector('.pri'), j.pri);
  setText(tr.querySelector('.age'), fmtSecs(j.age));
  setText(tr.querySelector('.left'), j.time_left ? fmtSecs(j.time_left) : '');
  setText(tr.querySelector('.size'), j.body_size);
  setText(tr.querySelector('.preview'), previewOf(j.body, S.preview, j.body_size));
  if (tr.dataset.state !== j.state) { // buttons change with the state only
    tr.dataset.state = j.state;
    tr.querySelector('.acts').innerHTML = jobButtons(j.state, `class="kick-job" data-id="${j.id}"`, `class="delete-job danger" data-id="${j.id}"`);
  }
}

async function loadTube(r) {
  const [t, page] = await Promise.all([
    api('tube?name=' + encodeURIComponent(r.tube)),
    api(`jobs?tube=${encodeURIComponent(r.tube)}&state=${r.state}&limit=20&after=${encodeURIComponent(S.cursors[S.cursors.length - 1])}`),
  ]);
  const hist = await api('history?tube=' + encodeURIComponent(r.tube)).catch(() => null);
  const pol = await api('policy?tube=' + encodeURIComponent(r.tube)).catch(() => null);
  return { t, page, hist, pol };
}

function drawTube(r, { t, page, hist, pol }) {
  const built = frame(r, `
    <h1 id="tube-title"><span id="tube-name">${esc(r.tube)}</span></h1>
    <div class="bar muted" id="tube-figures"></div>
    <div class="bar muted" id="tube-policy"></div>
    <div class="charts" id="charts" hidden></div>
    ${tubeActions(r.tube)}
    <h2>Jobs</h2>
    <div class="bar"><span class="tabs">${['ready', 'delayed', 'reserved', 'buried'].map(s => `<button data-state="${s}"></button>`).join('')}</span>
      <label>body as ${previewSelect}</label></div>
    <table id="jobs"><thead><tr><th>id</th><th class="num">pri</th><th class="num">age</th><th class="num">time left</th>
      <th class="num">size</th><th>body</th><th></th></tr></thead><tbody></tbody></table>
    <div class="bar"><button id="first">First page</button>
      <button id="next">Next page</button>
      <span class="muted" id="page-no"></span></div>`);
  if (built) {
    bindPreviewMode();
    document.querySelectorAll('.tabs button').forEach(b => b.onclick = () => {
      S.cursors = [''];
      location.hash = `#/tube/${encodeURIComponent(r.tube)}?state=${b.dataset.state}`;
    });
    $('#next').onclick = () => { if (S.next) { S.cursors.push(S.next); refresh(); } };
    $('#first').onclick = () => { S.cursors = ['']; refresh(); };
    // One handler for every row's buttons, so rows come and go without binding any.
    $('#jobs tbody').onclick = e => {
      const b = e.target.closest('button');
      if (!b) return;
      const id = Number(b.dataset.id);
      if (b.classList.contains('kick-job')) act('kick-job', { id });
      else if (b.classList.contains('delete-job')) act('delete', { id }, `Delete job ${id}?`);
    };
    bindTubeActions(r.tube);
    fillPolicyForm(pol);
  }
  setText($('#tube-policy'), policyText(r.tube, pol));
  setPaused($('#tube-title'), t.pause_left, 'paused');
  setText($('#tube-figures'), `ready ${t.ready} · urgent ${t.urgent} · reserved ${t.reserved} · delayed ${t.delayed} · ` +
    `buried ${t.buried} · total jobs ${t.total} · watching ${t.watching} · waiting ${t.waiting} · deletes ${t.deletes}`);

  const charts = $('#charts');
  charts.hidden = !hist;
  if (hist) {
    const series = [['ready', hist.ready], ['puts/s', hist.puts], ['deletes/s', hist.deletes]];
    if (!charts.children.length) series.forEach(([title]) => charts.append(chartNode(title)));
    series.forEach(([title, values], i) => updateChart(charts.children[i], title, values, new Date(hist.end)));
  }

  document.querySelectorAll('.tabs button').forEach(b => {
    setText(b, `${b.dataset.state} (${t[b.dataset.state]})`);
    setClass(b, 'on', b.dataset.state === r.state);
  });
  syncRows($('#jobs tbody'), page.jobs, j => j.id, jobRow, updateJobRow);
  S.next = page.next || '';
  $('#first').disabled = S.cursors.length <= 1;
  $('#next').disabled = !page.next;
  setText($('#page-no'), 'page ' + S.cursors.length);
}

// ---- job ----

const jobFields = ['id', 'tube', 'state', 'pri', 'age', 'delay', 'ttr', 'time_left', 'reserves', 'timeouts', 'releases', 'buries', 'kicks', 'body_size'];

// durations are shown as the tube page's list shows them, the exact seconds in a tooltip.
const jobDurations = new Set(['age', 'delay', 'ttr', 'time_left']);

async function loadJob(r) {
  try {
    return { j: await api('job?id=' + r.id) };
  } catch (e) {
    if (e.status === 404) return { missing: r.id };
    throw e;
  }
}

// holderText says who holds a reserved job: its connection's session and its gateway.
function holderText(j) {
  if (j.state !== 'reserved') return '';
  if (!j.holder) return 'unknown';
  return `connection ${j.holder} on gateway ${j.holder_gateway}` + (j.holder_here ? ' (this gateway)' : ' (another gateway)');
}

// eventDetail is what a history event adds to its kind: the delay asked for or given, the
// policy that acted (a bury that is no policy's is the worker's).
function eventDetail(e) {
  const parts = [];
  if (e.delay) parts.push('delay ' + fmtShort(e.delay));
  if (e.policy) parts.push('by policy ' + e.policy);
  else if (e.kind === 'buried') parts.push('by the worker');
  return parts.join(', ');
}

// eventRow is one event of the job's history: when (UTC, to the millisecond), what, who.
function eventRow(e) {
  const tr = document.createElement('tr');
  for (const [cls, text] of [['at', e.at.replace('T', ' ').replace(/(\.\d{3})\d*Z$/, '$1Z')], ['kind', e.kind],
    ['session', e.session || ''], ['addr', e.addr || ''], ['detail', eventDetail(e)]]) {
    const td = document.createElement('td');
    td.className = cls;
    td.textContent = text;
    tr.append(td);
  }
  return tr;
}

// drawEvents shows the job's history, or why there is none.
function drawEvents(j) {
  const events = j.events || [];
  $('#job-history').hidden = events.length === 0;
  $('#job-no-history').hidden = events.length > 0;
  const key = JSON.stringify(events);
  const body = $('#job-history tbody');
  if (body.dataset.key === key) return; // unchanged: leave any selection alone
  body.dataset.key = key;
  body.replaceChildren(...events.map(eventRow));
}

function drawJob(r, { j, missing }) {
  if (missing) {
    frame(r, `<h1>Job ${esc(missing)}</h1>
      <p class="notice" id="job-missing">No job ${esc(missing)}: it was deleted, or never existed.</p>`);
    S.view = ''; // should the job appear, its page is built afresh
    return;
  }
  const built = frame(r, `
    <h1>Job ${esc(j.id)} in <a id="job-tube"></a></h1>
    <table id="job-stats">${jobFields.map(f => `<tr><th>${f.replace('_', '-')}</th><td class="${f}"></td></tr>`).join('')}
      <tr id="job-holder-row"><th>held by</th><td class="holder"></td></tr></table>
    ${S.info.read_only ? actionsOff() : '<div class="bar" id="job-actions"></div>'}
    <h2>History</h2>
    <table id="job-history"><thead><tr><th>time (UTC)</th><th>event</th><th>connection</th><th>address</th><th></th></tr></thead><tbody></tbody></table>
    <p class="muted" id="job-no-history">No history: this job's tube keeps none (a policy with job history, for jobs put from then on).</p>
    <h2>Body ${previewSelect}</h2>
    <pre class="body" id="job-body"></pre>`);
  S.job = j; // the handlers act on the job as last drawn
  if (built) {
    bindPreviewMode();
    const bar = $('#job-actions');
    if (bar) bar.onclick = async e => {
      const b = e.target.closest('button'), { id, tube } = S.job;
      if (!b) return;
      if (b.id === 'job-kick') return act('kick-job', { id });
      if (!(await confirmThen(`Delete job ${id}?`))) return;
      try { await api('delete', { id }); location.hash = `#/tube/${encodeURIComponent(tube)}`; say('deleted job ' + id); } catch (err) { say(err.message, true); }
    };
  }
  const link = $('#job-tube');
  setText(link, j.tube);
  setAttr(link, 'href', '#/tube/' + encodeURIComponent(j.tube));
  for (const f of jobFields) {
    const cell = $('#job-stats .' + f);
    if (jobDurations.has(f)) {
      setText(cell, fmtSecs(j[f]));
      setAttr(cell, 'title', j[f] + ' s');
    } else {
      setText(cell, j[f]);
    }
  }
  $('#job-holder-row').hidden = j.state !== 'reserved';
  setText($('#job-stats .holder'), holderText(j));
  const bar = $('#job-actions');
  if (bar && bar.dataset.state !== j.state) {
    bar.dataset.state = j.state;
    bar.innerHTML = jobButtons(j.state, 'id="job-kick"', 'id="job-delete" class="danger"');
  }
  drawEvents(j);
  setText($('#job-body'), previewOf(j.body, S.preview, j.body_size));
}

// ---- loop ----

const views = {
  overview: [loadOverview, drawOverview],
  tube: [loadTube, drawTube],
  job: [loadJob, drawJob],
};

async function refresh() {
  if ($('#confirm').open) return; // leave the page still while a question is asked
  const r = route(), seq = ++S.seq;
  const [load, draw] = views[r.view];
  try {
    const data = await load(r);
    // Refreshes overlap (the timer, an action, a click): draw only the newest answer, and only
    // while its route is still the one shown.
    if (seq < S.drawn || frameKey(route()) !== frameKey(r) || route().state !== r.state) return;
    S.drawn = seq;
    draw(r, data);
    setText($('#updated'), 'updated ' + new Date().toLocaleTimeString());
    document.body.dataset.view = r.view;
  } catch (e) {
    say(e.message, true);
  }
}

function schedule() {
  clearInterval(S.timer);
  S.timer = S.live ? setInterval(() => { if (route().view !== 'job') refresh(); }, 1000) : null;
  $('#live').textContent = S.live ? 'Pause live' : 'Resume live';
  $('#live').classList.toggle('on', !S.live);
}

async function start() {
  S.info = await api('info');
  const i = S.info;
  $('#store').textContent = i.backend + (i.namespace ? ' · ' + i.namespace : '');
  $('#store').title = i.store || '';
  $('#gateway').textContent = i.gateway ? 'gateway ' + i.gateway : '';
  $('#version').textContent = i.version ? 'beangate ' + i.version : '';
  $('#find').onsubmit = e => {
    e.preventDefault();
    const id = $('#find-id').value.trim();
    if (!/^\d+$/.test(id)) return say('a job id is a number', true);
    location.hash = '#/job/' + id;
  };
  // A principal limited by its grants (docs/security.md) is told who it is and what it may do.
  const me = await api('whoami').catch(() => null);
  const everything = me && !me.tenant && me.grants.length === 1 && me.grants[0].tubes.join() === '*' && me.grants[0].allow.length === 4;
  if (me && !everything) {
    $('#whoami').textContent = 'as ' + me.name + (me.tenant ? ' · tenant ' + me.tenant : '');
    $('#whoami').title = me.grants.map(g => g.allow.join(', ') + ' on ' + g.tubes.join(' ')).join('\n');
  }
  $('#mode').textContent = S.info.read_only ? 'actions off' : '';
  $('#mode').title = S.info.read_only_reason || '';
  document.body.classList.toggle('readonly', S.info.read_only);
  $('#live').onclick = () => { S.live = !S.live; schedule(); };
  window.addEventListener('hashchange', () => {
    S.cursors = [''];
    say('');
    // Another page: the last one's forms must not be used (a put would go to its tube) while
    // the new one loads.
    if (frameKey(route()) !== S.view) {
      $('#view').replaceChildren();
      S.view = '';
    }
    refresh();
  });
  schedule();
  await refresh();
}

start().catch(e => say(e.message, true));
