import { useEffect, useState } from 'react';
import { createFileLink, downloadFile, type FileInfo } from '@profile-data/client';
import { useApi } from '../../api';
import { ActionError, useAction } from '../../ui/action';
import { Loading } from '../../ui/async';
import { ProblemView } from '../../ui/problem';
import { CopyField, bytes, when } from './shared';

/** Types an <img> shows as a picture; SVG and everything else are downloads only. */
const PREVIEWABLE = /^image\/(png|jpeg|gif|webp|avif|bmp)$/i;

const LINK_SECONDS = 3600;

/** One file: its facts, a preview for images, a download and a signed link. */
export function FileDetail(props: { file: FileInfo; onClose: () => void }) {
  const { options } = useApi();
  const { file } = props;
  const [link, setLink] = useState<{ url: string; expiresAt: string; copied: boolean }>();
  const download = useAction(async () => {
    const response = await downloadFile(options, file.id);
    const url = URL.createObjectURL(await response.blob());
    const anchor = document.createElement('a');
    anchor.href = url;
    anchor.download = file.name;
    anchor.click();
    // The browser has taken the bytes once the save began; the URL is not needed after that.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });
  const sign = useAction(async () => {
    const made = await createFileLink(options, file.id, LINK_SECONDS);
    const copied = await navigator.clipboard.writeText(made.url).then(
      () => true,
      () => false,
    );
    setLink({ url: made.url, expiresAt: made.expiresAt, copied });
  });
  return (
    <section className="panel" aria-labelledby="file-detail-title">
      <div className="panel-head">
        <h2 id="file-detail-title">
          File <span className="file-name">{file.name}</span>
        </h2>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      <dl className="facts">
        <div>
          <dt>Type</dt>
          <dd>{file.contentType}</dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{bytes(file.size)}</dd>
        </div>
        <div>
          <dt>Uploaded</dt>
          <dd>{when(file.createdAt)}</dd>
        </div>
        <div>
          <dt>SHA-256</dt>
          <dd className="mono">{file.sha256}</dd>
        </div>
      </dl>
      {PREVIEWABLE.test(file.contentType) && <Preview file={file} />}
      <div className="toolbar">
        <button type="button" onClick={() => download.run()} disabled={download.busy}>
          {download.busy ? 'Downloading…' : 'Download'}
        </button>
        <button type="button" onClick={() => sign.run()} disabled={sign.busy}>
          Copy signed link
        </button>
      </div>
      <ActionError error={download.error} />
      <ActionError error={sign.error} />
      {link && (
        <CopyField
          id="file-link"
          label="Signed link"
          value={link.url}
          note={`${link.copied ? 'Copied to the clipboard. ' : ''}Anyone holding it can download the file until ${when(link.expiresAt)} or until the file is deleted.`}
        />
      )}
    </section>
  );
}

/** The image, downloaded with the key into a blob: URL of this page's own. */
function Preview(props: { file: FileInfo }) {
  const { options } = useApi();
  const [state, setState] = useState<{ url?: string; error?: unknown }>({});
  useEffect(() => {
    const controller = new AbortController();
    let url: string | undefined;
    downloadFile(options, props.file.id, { signal: controller.signal })
      .then((response) => response.blob())
      .then(
        (blob) => {
          url = URL.createObjectURL(blob);
          setState({ url });
        },
        (error: unknown) => {
          if (!controller.signal.aborted) setState({ error });
        },
      );
    return () => {
      controller.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [options, props.file.id]);
  if (state.error !== undefined) return <ProblemView error={state.error} />;
  if (!state.url) return <Loading text="Loading the preview…" />;
  return (
    <figure className="preview">
      <img src={state.url} alt={`Preview of ${props.file.name}`} />
    </figure>
  );
}
