"""Uses a client generated from docs/openapi.json against a running service: signs up an
agent, uploads a document, and chats with the offline `builtin` model. Every answer is the
status and the type the document says. Called by scripts/openapi-client-check.sh."""

import io
import sys

from redline_client import AuthenticatedClient, Client
from redline_client.api.agents import agent_signup
from redline_client.api.chat import chat
from redline_client.api.documents import get_document, upload_document
from redline_client.models import (
    AgentSignupRequest,
    AgentSignupResponse,
    ChatRequestBody,
    DocumentBody,
    DocumentUploadForm,
    UploadBody,
)
from redline_client.types import File


def expect(response, status, kind=None):
    """The parsed answer, or exit with what came instead."""
    if response.status_code != status or (kind is not None and not isinstance(response.parsed, kind)):
        sys.exit(
            f"expected {status} {kind.__name__ if kind else ''}, got {int(response.status_code)} "
            f"{type(response.parsed).__name__}: {response.content[:500]!r}"
        )
    return response.parsed


def main(base_url: str) -> None:
    anonymous = Client(base_url=base_url, raise_on_unexpected_status=True)
    signed_up = expect(
        agent_signup.sync_detailed(client=anonymous, body=AgentSignupRequest(name="generated client")),
        201,
        AgentSignupResponse,
    )
    client = AuthenticatedClient(base_url=base_url, token=signed_up.api_key, raise_on_unexpected_status=True)

    text = "a cat sat on a mat\n\nanother paragraph with a\n"
    form = DocumentUploadForm(
        session_id="client-check",
        file=File(payload=io.BytesIO(text.encode()), file_name="note.txt", mime_type="text/plain"),
    )
    uploaded = expect(upload_document.sync_detailed(client=client, body=form), 200, UploadBody)
    assert uploaded.session_id == "client-check" and uploaded.section_count >= 1, uploaded

    body = ChatRequestBody.from_dict({"session_id": "client-check", "message": 'replace "a" with "b"'})
    answer = chat.sync_detailed(client=client, body=body)
    if answer.status_code != 200:
        sys.exit(f"chat: {int(answer.status_code)} {answer.content[:500]!r}")
    # The answer has a schema, so the client decodes it into its model.
    if answer.parsed is None:
        sys.exit("chat: the generated client could not decode the answer")
    print(f"chat answered {int(answer.status_code)} ({type(answer.parsed).__name__})")

    document = expect(get_document.sync_detailed("client-check", client=client), 200, DocumentBody)
    if "b cbt" not in document.html:
        sys.exit(f"the chat's edit is not in the document: {document.html[:500]}")
    print(f"signed up {signed_up.user_id}, uploaded {uploaded.filename}, chatted: {document.html[:80]!r}")


if __name__ == "__main__":
    main(sys.argv[1])
