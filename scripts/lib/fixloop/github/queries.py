"""The GraphQL the engine sends to GitHub: every query and mutation text, in one place.

Connections are read 100 nodes a page (GitHub's limit) and followed with their `endCursor`. An author is
read with its `__typename`: GraphQL gives a bot's login without the `[bot]` that REST adds. Comments of
threads, reviews and the conversation come with their author's `authorAssociation` (write access or not:
workflows.pr.filtering).
"""

from __future__ import annotations

PAGE_SIZE = 100

_COMMENT_FIELDS = "id databaseId author { __typename login } authorAssociation body createdAt url"

REVIEW_THREADS_QUERY = f"""\
query PullRequestReviewThreads($owner: String!, $name: String!, $number: Int!, $cursor: String) {{
  repository(owner: $owner, name: $name) {{
    pullRequest(number: $number) {{
      number
      author {{ __typename login }}
      headRefName
      state
      reviewThreads(first: {PAGE_SIZE}, after: $cursor) {{
        pageInfo {{ hasNextPage endCursor }}
        nodes {{
          id isResolved isOutdated path line originalLine
          comments(first: {PAGE_SIZE}) {{
            pageInfo {{ hasNextPage endCursor }}
            nodes {{ {_COMMENT_FIELDS} }}
          }}
        }}
      }}
    }}
  }}
}}
"""

THREAD_COMMENTS_QUERY = f"""\
query ReviewThreadComments($id: ID!, $cursor: String) {{
  node(id: $id) {{
    ... on PullRequestReviewThread {{
      comments(first: {PAGE_SIZE}, after: $cursor) {{
        pageInfo {{ hasNextPage endCursor }}
        nodes {{ {_COMMENT_FIELDS} }}
      }}
    }}
  }}
}}
"""

REVIEWS_QUERY = f"""\
query PullRequestReviews($owner: String!, $name: String!, $number: Int!, $cursor: String) {{
  repository(owner: $owner, name: $name) {{
    pullRequest(number: $number) {{
      reviews(first: {PAGE_SIZE}, after: $cursor) {{
        pageInfo {{ hasNextPage endCursor }}
        nodes {{ id author {{ __typename login }} authorAssociation body state }}
      }}
    }}
  }}
}}
"""

CONVERSATION_QUERY = f"""\
query PullRequestConversation($owner: String!, $name: String!, $number: Int!, $cursor: String) {{
  repository(owner: $owner, name: $name) {{
    pullRequest(number: $number) {{
      comments(first: {PAGE_SIZE}, after: $cursor) {{
        pageInfo {{ hasNextPage endCursor }}
        nodes {{ id author {{ __typename login }} authorAssociation body url }}
      }}
    }}
  }}
}}
"""

# The latest comments of some threads (at most PAGE_SIZE ids a request): what is already answered.
LATEST_COMMENTS_QUERY = f"""\
query ReviewThreadsLatestComments($ids: [ID!]!) {{
  nodes(ids: $ids) {{
    ... on PullRequestReviewThread {{
      id isResolved
      comments(last: {PAGE_SIZE}) {{ nodes {{ id databaseId author {{ __typename login }} body url }} }}
    }}
  }}
}}
"""

REPLY_TO_THREAD_MUTATION = """\
mutation ReplyToReviewThread($threadId: ID!, $body: String!) {
  addPullRequestReviewThreadReply(input: {pullRequestReviewThreadId: $threadId, body: $body}) {
    comment { id databaseId url }
  }
}
"""

RESOLVE_THREAD_MUTATION = """\
mutation ResolveReviewThread($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) {
    thread { id isResolved }
  }
}
"""
