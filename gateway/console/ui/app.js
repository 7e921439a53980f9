// beangate console: a single page over /api/ (see gateway/console). No framework, nothing
// loaded from elsewhere. Routes: #/ (tubes), #/tube/NAME?state=S (its jobs), #/job/ID.
'use strict';

const S = { info: null, live: true, timer: null, cursors: [''], preview: 'text' };
const $ = (sel, root = document) => root.querySelector(sel);
const esc = s => String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const fmtSecs = s => s >= 3600 ? (s / 3600).toFixed(1) + 'h' : s >= 60 ? (s / 60).toFixed(1) + 'm' : s.toFixed(0) + 's';
const rate = r => r >= 10 ? r.toFixed(0) : r.toFixed(1);

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': S.info ? S.info.csrf : '' },
  };
  const r = await fetch('/api/' + path, opts);
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function say(text, error) {
  const m = $('#msg');
  m.textContent = text;
  m.className = error ? 'error' : '';
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

// ---- overview ----

async function overview() {
  const ov = await api('overview');
  const rows = (ov.tubes || []).map(t => `
    <tr data-tube="${esc(t.name)}">
      <td><a href="#/tube/${encodeURIComponent(t.name)}">${esc(t.name)}</a>
        ${t.pause_left > 0 ? `<span class="paused">paused ${fmtSecs(t.pause_left)}</span>` : ''}</td>
      <td class="num ready">${t.ready}</td><td class="num urgent">${t.urgent}</td>
      <td class="num reserved">${t.reserved}</td><td class="num delayed">${t.delayed}</td>
      <td class="num buried">${t.buried}</td><td class="num total">${t.total}</td>
      <td class="num">${rate(t.puts_per_sec)}</td><td class="num">${rate(t.deletes_per_sec)}</td>
      <td class="num">${t.watching}</td><td class="num waiting">${t.waiting}</td>
    </tr>`).join('');
  $('#view').innerHTML = `
    <h1>Tubes</h1>
    <div class="bar muted">ready ${ov.ready} · reserved ${ov.reserved} · delayed ${ov.delayed} · buried ${ov.buried} · put since start ${ov.total}</div>
    <table id="tubes"><thead><tr><th>tube</th><th class="num">ready</th><th class="num">urgent</th>
      <th class="num">reserved</th><th class="num">delayed</th><th class="num">buried</th><th class="num">total</th>
      <th class="num">puts/s</th><th class="num">deletes/s</th><th class="num">watching</th><th class="num">waiting</th></tr></thead>
      <tbody>${rows}</tbody></table>
    ${ov.truncated ? '<p class="muted">More tubes exist than are shown.</p>' : ''}`;
}

// ---- tube ----

function chart(title, values) {
  const w = 360, h = 80, n = values.length;
  const top = Math.max(1, ...values);
  const pts = values.map((v, i) => `${(n < 2 ? 0 : i * w / (n - 1)).toFixed(1)},${(h - v * h / top).toFixed(1)}`).join(' ');
  return `<div class="chart"><div class="title">${esc(title)} · max ${top} · last ${n}s</div>
    <svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="${esc(title)}"><polyline points="${pts}"/></svg></div>`;
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

// actionsOff says, where the actions would be, that they are unavailable and why.
function actionsOff() {
  return `<p class="notice" id="actions-off">Actions (kick, delete, flush, pause, move, put) are unavailable: ${esc(S.info.read_only_reason || 'the console is read-only')}.</p>`;
}

function tubeActions(t, state) {
  if (S.info.read_only) return actionsOff();
  const q = esc(t.name);
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
      <button id="put">Put into ${q}</button>
    </div></div>`;
}

function bindTubeActions(t) {
  if (S.info.read_only) return;
  const name = t.name, num = id => Number($(id).value);
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
}

function jobRows(page) {
  const ro = S.info.read_only;
  return page.jobs.map(j => `
    <tr data-id="${j.id}">
      <td><a href="#/job/${j.id}">${j.id}</a></td><td class="num">${j.pri}</td><td class="num">${fmtSecs(j.age)}</td>
      <td class="num">${j.time_left ? fmtSecs(j.time_left) : ''}</td><td class="num">${j.body_size}</td>
      <td><div class="preview">${esc(previewOf(j.body, S.preview, j.body_size))}</div></td>
      <td>${ro ? '' : (j.state === 'buried' || j.state === 'delayed' ? `<button class="kick-job" data-id="${j.id}">Kick</button> ` : '') +
        (j.state === 'reserved' ? '' : `<button class="delete-job danger" data-id="${j.id}">Delete</button>`)}</td>
    </tr>`).join('');
}

async function tube(r) {
  const [t, page] = await Promise.all([
    api('tube?name=' + encodeURIComponent(r.tube)),
    S.info.listing ? api(`jobs?tube=${encodeURIComponent(r.tube)}&state=${r.state}&limit=20&after=${encodeURIComponent(S.cursors[S.cursors.length - 1])}`) : Promise.resolve({ jobs: [] }),
  ]);
  const hist = await api('history?tube=' + encodeURIComponent(r.tube)).catch(() => null);
  const tabs = ['ready', 'delayed', 'reserved', 'buried'].map(s =>
    `<button data-state="${s}" class="${s === r.state ? 'on' : ''}">${s} (${t[s]})</button>`).join('');
  const active = document.activeElement && document.activeElement.id;
  const kept = {};
  document.querySelectorAll('.actions input, .actions select, .actions textarea').forEach(e => { kept[e.id] = e.value; });
  $('#view').innerHTML = `
    <h1 id="tube-title">${esc(t.name)} ${t.pause_left > 0 ? `<span class="paused" id="paused">paused ${fmtSecs(t.pause_left)}</span>` : ''}</h1>
    <div class="bar muted" id="tube-figures">ready ${t.ready} · urgent ${t.urgent} · reserved ${t.reserved} · delayed ${t.delayed} ·
      buried ${t.buried} · total ${t.total} · watching ${t.watching} · waiting ${t.waiting} · deletes ${t.deletes}</div>
    ${hist ? `<div class="charts">${chart('ready', hist.ready)}${chart('puts/s', hist.puts)}${chart('deletes/s', hist.deletes)}</div>` : ''}
    ${tubeActions(t, r.state)}
    <h2>Jobs</h2>
    <div class="bar"><span class="tabs">${tabs}</span>
      <label>body as <select id="preview-mode"><option>text</option><option>hex</option><option>json</option></select></label></div>
    ${S.info.listing ? '' : '<p class="muted">This store cannot list jobs.</p>'}
    <table id="jobs"><thead><tr><th>id</th><th class="num">pri</th><th class="num">age</th><th class="num">time left</th>
      <th class="num">size</th><th>body</th><th></th></tr></thead><tbody>${jobRows(page)}</tbody></table>
    <div class="bar"><button id="first" ${S.cursors.length > 1 ? '' : 'disabled'}>First page</button>
      <button id="next" ${page.next ? '' : 'disabled'}>Next page</button>
      <span class="muted" id="page-no">page ${S.cursors.length}</span></div>`;
  for (const [id, v] of Object.entries(kept)) { const e = document.getElementById(id); if (e) e.value = v; }
  if (active && document.getElementById(active)) document.getElementById(active).focus();
  $('#preview-mode').value = S.preview;
  $('#preview-mode').onchange = e => { S.preview = e.target.value; refresh(); };
  document.querySelectorAll('.tabs button').forEach(b => b.onclick = () => {
    S.cursors = [''];
    location.hash = `#/tube/${encodeURIComponent(r.tube)}?state=${b.dataset.state}`;
  });
  $('#next').onclick = () => { S.cursors.push(page.next); refresh(); };
  $('#first').onclick = () => { S.cursors = ['']; refresh(); };
  document.querySelectorAll('.kick-job').forEach(b => b.onclick = () => act('kick-job', { id: Number(b.dataset.id) }));
  document.querySelectorAll('.delete-job').forEach(b => b.onclick = () => act('delete', { id: Number(b.dataset.id) }, `Delete job ${b.dataset.id}?`));
  bindTubeActions(t);
}

// ---- job ----

async function job(r) {
  const j = await api('job?id=' + r.id);
  const fields = ['id', 'tube', 'state', 'pri', 'age', 'delay', 'ttr', 'time_left', 'reserves', 'timeouts', 'releases', 'buries', 'kicks', 'body_size'];
  const ro = S.info.read_only;
  $('#view').innerHTML = `
    <h1>Job ${j.id} in <a href="#/tube/${encodeURIComponent(j.tube)}">${esc(j.tube)}</a></h1>
    <table id="job-stats">${fields.map(f => `<tr><th>${f.replace('_', '-')}</th><td class="${f}">${esc(j[f])}</td></tr>`).join('')}</table>
    ${ro ? actionsOff() : `<div class="bar">${j.state === 'buried' || j.state === 'delayed' ? '<button id="job-kick">Kick</button>' : ''}
      ${j.state === 'reserved' ? '' : '<button id="job-delete" class="danger">Delete</button>'}</div>`}
    <h2>Body <select id="preview-mode"><option>text</option><option>hex</option><option>json</option></select></h2>
    <pre class="body" id="job-body">${esc(previewOf(j.body, S.preview, j.body_size))}</pre>`;
  $('#preview-mode').value = S.preview;
  $('#preview-mode').onchange = e => { S.preview = e.target.value; refresh(); };
  if (!ro && $('#job-kick')) $('#job-kick').onclick = () => act('kick-job', { id: j.id });
  if (!ro && $('#job-delete')) $('#job-delete').onclick = async () => {
    if (!(await confirmThen(`Delete job ${j.id}?`))) return;
    try { await api('delete', { id: j.id }); location.hash = `#/tube/${encodeURIComponent(j.tube)}`; say('deleted job ' + j.id); } catch (e) { say(e.message, true); }
  };
}

// ---- loop ----

async function refresh() {
  if ($('#confirm').open) return; // leave the page still while a question is asked
  const r = route();
  try {
    if (r.view === 'tube') await tube(r);
    else if (r.view === 'job') await job(r);
    else await overview();
    $('#updated').textContent = 'updated ' + new Date().toLocaleTimeString();
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
  $('#store').textContent = S.info.backend;
  $('#mode').textContent = S.info.read_only ? 'actions off' : '';
  $('#mode').title = S.info.read_only_reason || '';
  document.body.classList.toggle('readonly', S.info.read_only);
  $('#live').onclick = () => { S.live = !S.live; schedule(); };
  window.addEventListener('hashchange', () => { S.cursors = ['']; say(''); refresh(); });
  schedule();
  await refresh();
}

start().catch(e => say(e.message, true));
