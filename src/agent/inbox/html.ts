/**
 * The inbox's two pages: the sign-in form and the inbox shell (`inbox.js` fills it in). The CSRF
 * value reaches the page only here, in a meta tag: the script reads it from the document and sends
 * it as a header; nothing is written to the browser's storage.
 */

/** Escapes text for an HTML attribute or element. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function head(base: string, title: string, extra = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${escapeHtml(base)}/assets/inbox.css">
${extra}</head>`;
}

/** The sign-in page (answered 401 to a request without a live session). */
export function signInHtml(base: string, problem?: string): string {
  const b = escapeHtml(base);
  return `${head(base, 'Sign in · Colloquy inbox')}
<body class="signin">
<main class="card">
  <h1>Colloquy <span class="subtitle">inbox</span></h1>
  <p>Sign in with your agent token. An administrator creates it with <code>colloquy agents add NAME</code>.</p>
  <form method="post" action="${b}/session" autocomplete="off">
    <label for="token">Agent token</label>
    <input id="token" name="token" type="password" autocomplete="current-password" required spellcheck="false">
    ${problem === undefined ? '' : `<p class="problem" id="problem" role="alert">${escapeHtml(problem)}</p>`}
    <button type="submit" id="sign-in">Sign in</button>
  </form>
</main>
</body>
</html>
`;
}

/** The inbox for a signed-in agent; `csrf` goes into a meta tag for the script and into the sign-out form. */
export function inboxHtml(base: string, agent: string, csrf: string): string {
  const b = escapeHtml(base);
  const meta = `<meta name="colloquy-csrf" content="${escapeHtml(csrf)}">
<meta name="colloquy-base" content="${b}">
<meta name="colloquy-agent" content="${escapeHtml(agent)}">
<script type="module" src="${b}/assets/inbox.js"></script>
`;
  return `${head(base, 'Colloquy inbox', meta)}
<body class="inbox">
<header class="bar">
  <div class="brand">Colloquy <span class="subtitle">inbox</span></div>
  <span class="presence" id="presence" role="status">connecting&hellip;</span>
  <span class="me"><span class="label">Signed in as </span><strong id="me">${escapeHtml(agent)}</strong></span>
  <form method="post" action="${b}/session/end" id="sign-out-form">
    <input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
    <button type="submit" id="sign-out" class="quiet">Sign out</button>
  </form>
</header>
<main class="layout">
  <section class="pane queue-pane" aria-label="Queue">
    <div class="pane-head">
      <h2>Queue <span class="count" id="queue-count">0</span></h2>
      <select id="queue-filter" aria-label="Show">
        <option value="all">All open</option>
        <option value="waiting">Waiting</option>
        <option value="mine">Mine</option>
      </select>
    </div>
    <ul id="queue" class="queue"></ul>
  </section>
  <section class="pane conv-pane" aria-label="Conversation">
    <p class="placeholder" id="placeholder">Pick a conversation from the queue.</p>
    <div id="conversation" class="conversation" hidden>
      <div class="conv-head">
        <button type="button" id="back" class="back quiet" aria-label="Back to the queue">&lsaquo; Queue</button>
        <div class="who">
          <div class="title" id="conv-title"></div>
          <div class="sub" id="conv-sub"></div>
        </div>
        <div class="clocks">
          <span class="clock" id="timeout-left" hidden></span>
          <span class="clock" id="idle-left" hidden></span>
        </div>
        <button type="button" id="claim">Claim</button>
      </div>
      <div class="offered" id="offered" hidden></div>
      <div class="transcript" id="transcript" role="log" aria-live="polite"></div>
      <div class="composer">
        <div class="tabs" role="tablist">
          <button type="button" role="tab" data-tab="reply" aria-selected="true">Reply</button>
          <button type="button" role="tab" data-tab="choices" aria-selected="false">Choices</button>
          <button type="button" role="tab" data-tab="note" aria-selected="false">Note</button>
          <button type="button" role="tab" data-tab="release" aria-selected="false">Release</button>
        </div>
        <form class="panel" data-panel="reply" id="reply" autocomplete="off">
          <select id="canned" aria-label="Canned replies"><option value="">Canned replies&hellip;</option></select>
          <textarea id="reply-text" rows="2" maxlength="4096" placeholder="Write to the customer" aria-label="Reply"></textarea>
          <button type="submit" id="reply-send">Send</button>
        </form>
        <form class="panel" data-panel="choices" id="choices" autocomplete="off" hidden>
          <div class="row">
            <select id="choice-kind" aria-label="Kind of choices">
              <option value="buttons">Buttons (up to 3)</option>
              <option value="list">List (up to 10 rows)</option>
            </select>
            <input id="choice-button" maxlength="20" placeholder="List button label" aria-label="List button label" hidden>
          </div>
          <input id="choice-body" maxlength="1024" placeholder="Message above the choices" aria-label="Message">
          <textarea id="choice-options" rows="3" placeholder="One choice per line" aria-label="Choices, one per line"></textarea>
          <button type="submit" id="choice-send">Send choices</button>
        </form>
        <form class="panel" data-panel="note" id="note" autocomplete="off" hidden>
          <textarea id="note-text" rows="2" maxlength="2000" placeholder="Internal note: only agents see it" aria-label="Internal note"></textarea>
          <button type="submit" id="note-add">Add note</button>
        </form>
        <form class="panel" data-panel="release" id="release-form" autocomplete="off" hidden>
          <input id="release-note" maxlength="2000" placeholder="Note for the bot (optional)" aria-label="Release note">
          <button type="submit" id="release">Release to the bot</button>
        </form>
      </div>
    </div>
    <div class="status" id="status" role="status"></div>
  </section>
</main>
</body>
</html>
`;
}
