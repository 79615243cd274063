import { useState } from 'preact/hooks';
import { describeError } from '../api/api-error.js';
import { login, type Session } from '../session/session.js';
import { ErrorBox } from '../ui/components.js';

/**
 * Log in with a principal id and its PRIVATE Ed25519 JWK (`writ principal
 * keygen` writes one), chosen as a file or pasted. The text is parsed and
 * imported as a non-extractable CryptoKey, then dropped: the form is cleared
 * and nothing but the CryptoKey stays, in memory (see session.ts).
 */
export function LoginPage(props: { readonly onSession: (session: Session) => void }) {
  const [principalId, setPrincipalId] = useState('');
  const [pasted, setPasted] = useState('');
  const [fileText, setFileText] = useState<string | undefined>(undefined);
  const [fileName, setFileName] = useState<string | undefined>(undefined);
  const [error, setError] = useState<{ code: string; message: string } | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const pickFile = async (input: HTMLInputElement): Promise<void> => {
    const file = input.files?.[0];
    input.value = '';
    if (file === undefined) return;
    setFileText(await file.text());
    setFileName(file.name);
  };

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session = await login({ principalId, jwkText: fileText ?? pasted });
      setPasted('');
      setFileText(undefined);
      props.onSession(session);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="login">
      <h1>Writ console</h1>
      <p class="note">
        Sign in as a registered principal with its private key. The key is imported into this browser's WebCrypto as a non-extractable key, kept in memory for this tab only, and
        never sent: every request carries a short-lived token signed here.
      </p>
      <form onSubmit={(event) => void submit(event)} data-testid="login-form">
        <label>
          Principal id
          <input name="principal" autoComplete="username" value={principalId} onInput={(event) => setPrincipalId((event.target as HTMLInputElement).value)} required />
        </label>
        <label>
          Private key file (JWK)
          <input type="file" name="key-file" accept=".json,application/json" onChange={(event) => void pickFile(event.target as HTMLInputElement)} />
        </label>
        {fileName === undefined ? null : <p class="note">Loaded {fileName} (not displayed).</p>}
        <label>
          …or paste the private JWK
          <textarea name="key" rows={4} spellcheck={false} autoComplete="off" value={pasted} onInput={(event) => setPasted((event.target as HTMLTextAreaElement).value)} />
        </label>
        <button type="submit" disabled={busy || (fileText === undefined && pasted.trim() === '')}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorBox error={error} />
    </div>
  );
}
