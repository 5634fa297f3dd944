@echo off
rem Installs what the book's notebooks need (Windows). Details: the HTML guide in this folder.
rem   install_lab.bat                          from PyPI, or from the mirror in PIP_INDEX_URL
rem   install_lab.bat https://MIRROR/simple    from a campus mirror
rem   set PYTHON=C:\path\to\python.exe         first, to choose the Python (e.g. Anaconda's)
rem With a packages\ folder here (wheels made by pip download) nothing is downloaded.
rem This file only finds Python @PYTHON_MIN@ or newer; install_lab.py does the rest.
rem ASCII only and CRLF line endings: cmd.exe reads .bat files in the console code page.
setlocal
pushd "%~dp0"
set "PY="
if defined PYTHON (
    call :try "%PYTHON%"
) else (
    for %%V in (3.11 3.12 3.13 3.14) do if not defined PY call :try py -%%V
    if not defined PY call :try python
)
if not defined PY goto no_python
%PY% install_lab.py %*
set "RESULT=%ERRORLEVEL%"
goto done

:no_python
echo.
echo Python @PYTHON_MIN@ or newer was not found (tried: PYTHON, py -3.11 ... py -3.14, python).
echo Install it from python.org, or run:  set PYTHON=C:\path\to\python.exe
set "RESULT=1"
goto done

:try
rem the arguments are a command that starts Python: py -3.11, python or "C:\...\python.exe"
%* -c "import sys; sys.exit(sys.version_info < (@PYTHON_MIN_TUPLE@))" >nul 2>&1
if not errorlevel 1 set PY=%*
exit /b 0

:done
popd
rem double-clicked (cmd /c): keep the window open so the messages can be read
echo %CMDCMDLINE% | find /i "/c" >nul && pause
exit /b %RESULT%
